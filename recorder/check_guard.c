/*
 * The guard process of check_guard.h. Its socket carries 'u' PATH '\0' (the file to remove) and
 * 'r' (released); end of file without 'r' means the recorder died.
 */
#define _GNU_SOURCE
#include "check_guard.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static bool read_byte(int fd, char *c)
{
	ssize_t n;

	do
		n = read(fd, c, 1);
	while (n < 0);
	return n == 1;
}

/* In the guard: wait for the recorder's end; continue the job unless it said all is well. */
static void guard(int fd, pid_t pgrp)
{
	char path[PATH_MAX] = "", c;
	int null = open("/dev/null", O_RDWR);
	size_t n;

	/* Hold none of the command's files: a reader downstream must see EOF when we end. */
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	prctl(PR_SET_NAME, "closuretrace-gd");
	while (read_byte(fd, &c)) {
		if (c == 'r')
			_exit(0);
		if (c != 'u')
			continue;
		for (n = 0; read_byte(fd, &c) && c && n + 1 < sizeof(path); n++)
			path[n] = c;
		path[n] = '\0';
	}
	/* SIGCONT leaves running processes running: only those held at an exec change. */
	kill(-pgrp, SIGCONT);
	if (path[0])
		unlink(path);
	_exit(0);
}

int check_guard_start(void)
{
	int fds[2];
	pid_t pid;

	/* A socket, not a pipe: a send to a guard that was killed raises no SIGPIPE in the
	 * recorder. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[1]);
		guard(fds[0], getpgrp());
	}
	close(fds[0]);
	return fds[1];
}

void check_guard_unlink(int fd, const char *path)
{
	if (fd < 0 || !path || !path[0])
		return;
	(void)!send(fd, "u", 1, MSG_NOSIGNAL);
	(void)!send(fd, path, strlen(path) + 1, MSG_NOSIGNAL);
}

void check_guard_release(int fd)
{
	if (fd < 0)
		return;
	(void)!send(fd, "r", 1, MSG_NOSIGNAL);
	close(fd);
}
