/* Another process's memory: see proc_mem.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc_mem.h"

/* The kernel without process_vm_readv (CONFIG_CROSS_MEMORY_ATTACH off) still has /proc/PID/mem. */
static int read_proc_file(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t got;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, (off_t)addr);
	err = got < 0 ? -errno : (size_t)got == len ? 0 : -EFAULT;
	close(fd);
	return err == -EIO ? -EFAULT : err;
}

int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	if (got >= 0)
		return -EFAULT; /* a partial read: the rest is not mapped */
	if (errno == ENOSYS)
		return read_proc_file(pid, addr, buf, len);
	return -errno;
}

bool proc_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = len ? readlink(link, buf, len - 1) : -1;
	if (n < 0 || (size_t)n >= len - 1)
		return false;
	buf[n] = '\0';
	return true;
}

bool proc_cpu_ns(pid_t pid, uint64_t *ns)
{
	char path[64], buf[1024], *p;
	unsigned long long user, sys;
	long tick = sysconf(_SC_CLK_TCK);
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* After the command name: state and 10 numbers, then utime and stime in clock ticks. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && tick > 0 &&
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user, &sys) ==
		    2) {
		*ns = (user + sys) * (1000000000ull / (unsigned long long)tick);
		ok = true;
	}
	fclose(f);
	return ok;
}

char proc_state(pid_t pid, unsigned long *flags)
{
	char path[64], buf[1024], *p, state = '?';
	FILE *f;

	*flags = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return state;
	/* After the command name's closing parenthesis: state, then 5 numbers, then flags. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, flags);
	fclose(f);
	return state;
}
