/*
 * A target for `record -p` that exits while closuretrace attaches to it, at a chosen point, every
 * time (issue 12 item 10):
 *
 *   ct_attach_exit WHEN REAP DIR
 *
 * prints the target's pid, then waits for standard input to close. The target maps DIR/data, and
 * in its own mount namespace a fifo is bind-mounted over that path: the recorder, which opens every
 * mapped file to read its ELF headers, blocks on it until this program opens the other end. Each
 * such open is a point where the recorder is known to be; at the chosen one the target is killed
 * and, before the recorder reads on, has exited:
 *   WHEN scan      at the first open (the recorder checking -p's target, before anything loads)
 *   WHEN attached  at the first open once the dynamic loader is watched (its uprobe is in place:
 *                  the byte at _r_debug.r_brk is an int3), i.e. as recording is about to begin
 *   REAP zombie    the target stays a zombie until standard input closes
 *   REAP reaped    the target is reaped at once
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <closure.h>

static void die(const char *what)
{
	fprintf(stderr, "ct_attach_exit: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Whether the loader's breakpoint function in pid holds an int3: a uprobe is attached there. */
static bool loader_watched(pid_t pid)
{
	unsigned char byte = 0;
	struct iovec local = {&byte, 1}, remote = {(void *)_r_debug.r_brk, 1};

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 1)
		die("process_vm_readv");
	return byte == 0xcc;
}

/* A private mount namespace where DIR/data, mapped, is covered by a fifo. Returns the fifo. */
static char *cover_mapped_file(const char *dir)
{
	char *data, *fifo;
	int fd;

	if (asprintf(&data, "%s/data", dir) < 0 || asprintf(&fifo, "%s/fifo", dir) < 0)
		die("asprintf");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("a private mount namespace");
	fd = open(data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) ||
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		die(data);
	close(fd);
	if (mkfifo(fifo, 0600) || mount(fifo, data, NULL, MS_BIND, NULL))
		die("the fifo over the mapped file");
	free(fifo);
	return data;
}

/* The target: a process with libclosure loaded, doing nothing until it is killed. */
static void target(int ready)
{
	struct closure cl;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test's kill of its parent */
	closure_init_stack(&cl);	  /* libclosure stays a needed library */
	closure_sync(&cl);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/* Serves the recorder's opens of the covered file until the chosen one; returns then. */
static void serve_opens(const char *path, pid_t pid, bool at_attach, bool reap)
{
	for (;;) {
		int fd = open(path, O_WRONLY | O_CLOEXEC); /* blocks until the recorder opens it */
		siginfo_t si;

		if (fd < 0)
			die(path);
		if (!at_attach || loader_watched(pid)) {
			kill(pid, SIGKILL);
			/* Dead before the recorder reads on: a zombie, or reaped. */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | (reap ? 0 : WNOWAIT)))
				die("waitid");
			close(fd);
			return;
		}
		close(fd); /* the recorder reads an empty file, and goes on */
	}
}

int main(int argc, char **argv)
{
	int ready[2];
	char c, *path;
	pid_t pid;

	if (argc != 4 || (strcmp(argv[1], "scan") && strcmp(argv[1], "attached")) ||
	    (strcmp(argv[2], "zombie") && strcmp(argv[2], "reaped"))) {
		fprintf(stderr, "usage: ct_attach_exit scan|attached zombie|reaped DIR\n");
		return 2;
	}
	path = cover_mapped_file(argv[3]);
	if (pipe2(ready, O_CLOEXEC))
		die("pipe2");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		target(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("the target did not start");
	printf("%d\n", (int)pid);
	fflush(stdout);
	serve_opens(path, pid, !strcmp(argv[1], "attached"), !strcmp(argv[2], "reaped"));
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}
