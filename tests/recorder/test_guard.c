/*
 * The guard process (recorder/check_guard.c) as the holder of the links' last references: it keeps
 * what it is handed until released (then, or when the recorder dies, it lets them go), lets go at
 * once those of a process that ended, and holds none of the recorder's other descriptors, so that a
 * reader of the recorder's output sees its end when the recorder ends, though the guard outlives
 * it. Pipes stand in for the links: their reader sees the end exactly when the last copy of the
 * write end is closed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "check_guard.h"

static int fails;

/* Whether the pipe's reader sees its end within ms. */
static bool ended_within(int reader, int ms)
{
	struct pollfd p = {.fd = reader, .events = POLLIN};
	char c;

	return poll(&p, 1, ms) == 1 && read(reader, &c, 1) == 0;
}

static void expect(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	fails += !ok;
}

int main(void)
{
	int other[2], link[2], gone[2], guard;

	/* Given to the recorder by its caller: inherited by the guard, which must close it. */
	if (pipe(other) || pipe2(link, O_CLOEXEC))
		return perror("pipe"), 2;
	guard = check_guard_start();
	expect(guard >= 0, "the guard started");
	close(other[1]);
	expect(ended_within(other[0], 5000), "the guard holds none of the recorder's descriptors");

	expect(check_guard_hand_links(guard, &link[1], 1, false), "one link handed over");
	close(link[1]);
	expect(!ended_within(link[0], 300), "the guard keeps the link it was handed");

	/* A process's links once it ended: let go at once, the others kept. */
	if (pipe2(gone, O_CLOEXEC))
		return perror("pipe"), 2;
	expect(check_guard_hand_links(guard, &gone[1], 1, true),
	       "an ended process's link handed over");
	close(gone[1]);
	expect(ended_within(gone[0], 5000), "the guard lets it go at once");
	expect(!ended_within(link[0], 300), "and still keeps the link it holds");
	check_guard_release(guard);
	expect(ended_within(link[0], 5000), "released, the guard lets the link go");

	/* A recorder that dies: the end of its socket without a release. */
	if (pipe2(link, O_CLOEXEC))
		return perror("pipe"), 2;
	guard = check_guard_start();
	expect(check_guard_hand_links(guard, &link[1], 1, false), "a link handed over");
	close(link[1]);
	expect(!ended_within(link[0], 300), "the guard keeps it while the recorder lives");
	close(guard);
	expect(ended_within(link[0], 5000), "the recorder gone, the guard lets the link go");

	expect(!check_guard_hand_links(-1, &link[0], 1, false), "no guard: nothing handed over");
	return fails ? 1 : 0;
}
