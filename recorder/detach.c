/*
 * The session's BPF links let go. Every uprobe link's release waits for an RCU-tasks grace period
 * (30-40 ms measured here, 20-250 ms elsewhere; two links released at the same moment were seen
 * to share one seldom), a fixed cost of every check that its user would wait for, after the
 * verdict.
 *
 * Once no traced process is left (session_poll), nothing can fire the uprobe links any more: the
 * guard process of a launched command (check_guard.h) is handed their last references and lets
 * them go while we end (a check of a short test paid a third of its time for the waits). The
 * other links (tracepoints, libbpf's: cheap, or on old kernels), those of -p, and every link of a
 * session whose processes still run (a stop) go here, each in a thread of its own, so that the
 * waits overlap; started as early, and joined at the close. Attached per process, the links of a
 * process that ended go to the guard at once, which lets them go without anyone waiting.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "check_guard.h"
#include "session.h"

struct release {
	int fd;		       /* a uprobe_multi link, or -1 */
	struct bpf_link *link; /* else one of libbpf's */
	bool threaded;
	pthread_t thread;
};

struct detacher {
	struct detacher *next; /* an earlier one still under way */
	size_t n;
	struct release r[];
};

static void *release(void *arg)
{
	const struct release *r = arg;

	if (r->fd >= 0)
		close(r->fd);
	else
		bpf_link__destroy(r->link);
	return NULL;
}

void session_detach_behind(struct session *s)
{
	if (s->attach.n_link_fds && check_guard_hand_links(s->procs.guard, s->attach.link_fds,
							   s->attach.n_link_fds, false)) {
		for (size_t i = 0; i < s->attach.n_link_fds; i++)
			close(s->attach.link_fds[i]); /* the guard's copies keep them */
		s->attach.n_link_fds = 0;
	}
	session_detach_start(s); /* the rest */
}

/* A release of each of fds[0..n) and links[0..m), each in a thread; NULL when none. */
static struct detacher *detacher_start(const int *fds, size_t n, struct bpf_link **links, size_t m)
{
	struct detacher *d = n + m ? calloc(1, sizeof(*d) + (n + m) * sizeof(d->r[0])) : NULL;

	for (size_t i = 0; i < n + m; i++) {
		struct release one = {.fd = i < n ? fds[i] : -1,
				      .link = i < n ? NULL : links[i - n]};

		if (!d) {
			release(&one); /* no memory: one after the other */
			continue;
		}
		d->r[i] = one;
		d->r[i].threaded = !pthread_create(&d->r[i].thread, NULL, release, &d->r[i]);
		if (!d->r[i].threaded)
			release(&d->r[i]);
	}
	if (d)
		d->n = n + m;
	return d;
}

static void detacher_wait(struct detacher *d)
{
	while (d) {
		struct detacher *next = d->next;

		for (size_t i = 0; i < d->n; i++)
			if (d->r[i].threaded)
				pthread_join(d->r[i].thread, NULL);
		free(d);
		d = next;
	}
}

void session_detach_start(struct session *s)
{
	struct detacher *d = detacher_start(s->attach.link_fds, s->attach.n_link_fds,
					    s->attach.links, s->attach.n_links);

	/* Handed over: links attached from now on are the next call's. */
	free(s->attach.link_fds);
	free(s->attach.link_pids);
	free(s->attach.links);
	s->attach.link_fds = NULL, s->attach.link_pids = NULL, s->attach.links = NULL;
	s->attach.n_link_fds = s->attach.n_links = 0;
	session_detach_wait(s); /* an earlier start's, now that this one's waits have begun */
	s->attach.detacher = d;
}

void session_detach_wait(struct session *s)
{
	detacher_wait(s->attach.detacher);
	s->attach.detacher = NULL;
}

void session_detach_links(struct session *s, int *fds, size_t n)
{
	struct detacher *d;

	if (n && check_guard_hand_links(s->procs.guard, fds, n, true)) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]); /* the guard's copies go there, unwaited */
		return;
	}
	d = detacher_start(fds, n, NULL, 0);
	if (d) { /* joined at the close */
		d->next = s->attach.detacher;
		s->attach.detacher = d;
	}
}
