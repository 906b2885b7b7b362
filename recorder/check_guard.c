/*
 * The guard process of check_guard.h. Its socket carries 'u' PATH '\0' (the file to remove), 'l'
 * with link descriptors attached (SCM_RIGHTS) to hold, 'x' with descriptors to let go at once, and
 * 'r' (released); end of file without 'r' means the recorder died.
 */
#define _GNU_SOURCE
#include "check_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Descriptors per 'l' message, and held at most (more are the recorder's to let go). */
#define LINKS_PER_MESSAGE 64
#define LINKS_HELD	  1024

/* Room for one message's descriptors, aligned as a control message. */
union link_control {
	char buf[CMSG_SPACE(LINKS_PER_MESSAGE * sizeof(int))];
	struct cmsghdr align;
};

struct held {
	int fd[LINKS_HELD];
	size_t n;
};

/* One byte from the recorder, and the descriptors it carries, kept in h. */
static bool read_byte(int fd, char *c, struct held *h)
{
	union link_control control;
	struct iovec iov = {c, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	do {
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	for (struct cmsghdr *m = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; m; m = CMSG_NXTHDR(&msg, m)) {
		size_t count = (m->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[LINKS_PER_MESSAGE];

		if (m->cmsg_level != SOL_SOCKET || m->cmsg_type != SCM_RIGHTS ||
		    count > LINKS_PER_MESSAGE)
			continue;
		memcpy(got, CMSG_DATA(m), count * sizeof(int));
		for (size_t i = 0; i < count; i++)
			if (h->n < LINKS_HELD)
				h->fd[h->n++] = got[i];
			else
				close(got[i]);
	}
	return n == 1;
}

static void *close_one(void *fd)
{
	close((int)(intptr_t)fd);
	return NULL;
}

/*
 * Each link's release waits for its grace period (46 ms each here, one after the other; 50 at
 * once took 73 ms): each in a thread of its own, joined when wait.
 */
static void let_go_fds(const int *fds, size_t n, bool wait)
{
	static pthread_t threads[LINKS_HELD];
	pthread_attr_t attr;
	bool started[LINKS_HELD] = {false};

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (!wait)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (size_t i = 0; i < n && i < LINKS_HELD; i++) {
		started[i] =
			!pthread_create(&threads[i], &attr, close_one, (void *)(intptr_t)fds[i]);
		if (!started[i])
			close(fds[i]);
	}
	for (size_t i = 0; wait && i < n && i < LINKS_HELD; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	pthread_attr_destroy(&attr);
}

/* In the guard, nobody waits for the links' release. */
static void let_go(struct held *h)
{
	let_go_fds(h->fd, h->n, true);
	h->n = 0;
}

/* In the guard: wait for the recorder's end; continue the job unless it said all is well. */
static void guard(int fd, pid_t pgrp)
{
	static struct held links;
	char path[PATH_MAX] = "", c;
	int null = open("/dev/null", O_RDWR);
	size_t n;

	/*
	 * Hold none of the command's files, nor any the recorder was given: a reader downstream
	 * must see EOF when the recorder ends, though the guard may outlive it (its links).
	 */
	if (fd <= 2) { /* started with a standard descriptor closed: keep the socket apart */
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		fd = moved >= 0 ? moved : fd;
	}
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	if (fd > 3)
		close_range(3, (unsigned int)fd - 1, 0);
	close_range((unsigned int)fd + 1, ~0U, 0);
	prctl(PR_SET_NAME, "closuretrace-gd");
	for (size_t before = 0; read_byte(fd, &c, &links); before = links.n) {
		if (c == 'x') { /* the links of a process that ended: nothing can fire them */
			let_go_fds(links.fd + before, links.n - before, false);
			links.n = before;
		}
		if (c == 'r') {
			let_go(&links);
			_exit(0);
		}
		if (c != 'u')
			continue;
		for (n = 0; read_byte(fd, &c, &links) && c && n + 1 < sizeof(path); n++)
			path[n] = c;
		path[n] = '\0';
	}
	/*
	 * The links first: none may stop a process again once it runs on. SIGCONT leaves running
	 * processes running: only those held at an exec change.
	 */
	let_go(&links);
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

bool check_guard_hand_links(int fd, const int *links, size_t n, bool now)
{
	for (size_t i = 0; fd >= 0 && i < n; i += LINKS_PER_MESSAGE) {
		size_t count = n - i < LINKS_PER_MESSAGE ? n - i : LINKS_PER_MESSAGE;
		union link_control control = {0};
		struct iovec iov = {now ? "x" : "l", 1};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = control.buf,
				     .msg_controllen = CMSG_SPACE(count * sizeof(int))};
		struct cmsghdr *m = CMSG_FIRSTHDR(&msg);

		m->cmsg_level = SOL_SOCKET;
		m->cmsg_type = SCM_RIGHTS;
		m->cmsg_len = CMSG_LEN(count * sizeof(int));
		memcpy(CMSG_DATA(m), links + i, count * sizeof(int));
		if (sendmsg(fd, &msg, MSG_NOSIGNAL) != 1)
			return false;
	}
	return fd >= 0;
}

void check_guard_release(int fd)
{
	if (fd < 0)
		return;
	(void)!send(fd, "r", 1, MSG_NOSIGNAL);
	close(fd);
}
