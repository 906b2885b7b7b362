/*
 * The in-process sink: the transport without BPF. CLOSURETRACE_SINK=DIR (set by closuretrace
 * check or record when BPF is not permitted) makes this process write its batches to DIR/PID
 * itself, with the module records needed to symbolize after it exits. Writes are synchronous,
 * so nothing is lost while the process lives; a forked child opens a file of its own.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "batch_sink.h"

static int sink_fd = -1;
static uint32_t sink_pid;

static uint64_t sink_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One chunk: header, a fixed part and a variable part, in one write (O_APPEND keeps it whole). */
static void put_chunk(uint16_t kind, const void *fixed, size_t fixed_len, const void *var,
		      size_t var_len)
{
	struct closure_sink_chunk h = {
		.magic = CLOSURE_BATCH_MAGIC,
		.kind = kind,
		.version = CLOSURE_BATCH_VERSION,
		.size = (uint32_t)(fixed_len + var_len),
		.pid = sink_pid,
	};
	struct iovec v[3] = {{&h, sizeof(h)}, {(void *)fixed, fixed_len}, {(void *)var, var_len}};
	size_t total = sizeof(h) + fixed_len + var_len;

	if (sink_fd >= 0 && writev(sink_fd, v, 3) != (ssize_t)total) {
		close(sink_fd); /* a full disk: the tool sees the stream end without an END */
		sink_fd = -1;
	}
}

static int put_module(struct dl_phdr_info *info, size_t size, void *exe)
{
	const char *path = info->dlpi_name[0] ? info->dlpi_name : exe;
	uint64_t bias = info->dlpi_addr;

	(void)size;
	if (path[0] == '/')
		put_chunk(CLOSURE_SINK_MODULE, &bias, sizeof(bias), path, strlen(path));
	return 0;
}

static void put_modules(void)
{
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(put_module, exe);
}

/* Opens DIR/PID and writes the start and module records. */
static void sink_open(const char *dir)
{
	char path[PATH_MAX], exe[PATH_MAX] = "";
	uint64_t ts = sink_now();
	ssize_t n;

	sink_pid = (uint32_t)getpid();
	if (snprintf(path, sizeof(path), "%s/%u", dir, sink_pid) >= (int)sizeof(path))
		return;
	sink_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (sink_fd < 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	put_chunk(CLOSURE_SINK_START, &ts, sizeof(ts), exe, n > 0 ? (size_t)n : 0);
	put_modules();
}

static const char *sink_dir(void)
{
	const char *dir = getenv(CLOSURE_SINK_ENV);

	return dir && dir[0] == '/' ? dir : NULL;
}

void closure_batch_sink_start(void)
{
	const char *dir = sink_dir();

	if (!dir)
		return;
	sink_open(dir);
	if (sink_fd >=
	    0) /* batching on for the life of the process, as if a tracer were attached */
		__atomic_add_fetch(&closure_batch_semaphore, 1, __ATOMIC_RELAXED);
}

void closure_batch_sink_write(const struct closure_batch_buf *b, uint32_t n)
{
	struct closure_sink_batch h = {.tid = b->tid, .n = n, .dropped = b->dropped};

	if (sink_fd >= 0 && (n || h.dropped))
		put_chunk(CLOSURE_SINK_BATCH, &h, sizeof(h), b->rec, n * sizeof(b->rec[0]));
}

void closure_batch_sink_forked(void)
{
	const char *dir = sink_dir();

	if (sink_fd < 0 || !dir)
		return;
	close(sink_fd); /* the parent's file */
	sink_fd = -1;
	sink_open(dir);
}

void closure_batch_sink_stop(void)
{
	uint64_t ts = sink_now();

	if (sink_fd < 0)
		return;
	put_modules(); /* objects dlopen'ed since the start */
	put_chunk(CLOSURE_SINK_END, &ts, sizeof(ts), NULL, 0);
}
