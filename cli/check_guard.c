/* The guard process of check_guard.h. */
#define _GNU_SOURCE
#include "check_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char released = 'r';

/* In the guard: wait for check's end; continue the job unless check said all is well. */
static void guard(int fd, pid_t pgrp, const char *temp_trace)
{
	char c = 0;
	ssize_t n;
	int null = open("/dev/null", O_RDWR);

	/* Hold none of the command's files: a reader downstream must see EOF when check ends. */
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	prctl(PR_SET_NAME, "closuretrace-gd");
	do
		n = read(fd, &c, 1);
	while (n < 0);
	if (n == 1 && c == released)
		_exit(0);
	/* SIGCONT leaves running processes running: only those held at an exec change. */
	kill(-pgrp, SIGCONT);
	if (temp_trace && temp_trace[0])
		unlink(temp_trace);
	_exit(0);
}

int check_guard_start(const char *temp_trace)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[1]);
		guard(fds[0], getpgrp(), temp_trace);
	}
	close(fds[0]);
	return fds[1];
}

void check_guard_release(int fd)
{
	if (fd < 0)
		return;
	(void)!write(fd, &released, 1);
	close(fd);
}
