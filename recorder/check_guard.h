/*
 * The recorder's guard against its own sudden death. A launched command's processes are stopped
 * by the BPF programs at each exec (and loader change) until the recorder has attached to them
 * and sent SIGCONT; if the recorder is SIGKILLed in that window, nobody would ever send it. The
 * guard is a small process forked before the command starts that waits on a pipe: when the
 * recorder ends without releasing it, it continues the job (the recorder's process group, where
 * the command runs) and removes the unfinished trace.
 *
 * It also lets go the uprobe links handed to it once no process of the command is left: each
 * link's release waits for an RCU-tasks grace period (30-40 ms here, 20-250 ms elsewhere), which
 * nobody then needs to wait for (recorder/detach.c).
 */
#ifndef CLOSURETRACE_CHECK_GUARD_H
#define CLOSURETRACE_CHECK_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Starts the guard. Returns the pipe to talk to it through, or -1 (unguarded). */
int check_guard_start(void);

/* The file the guard removes should the recorder die (NULL or "": none). */
void check_guard_unlink(int fd, const char *path);

/*
 * Hands the guard a copy of links[0..n): it closes them when released (or when the recorder
 * dies, before it continues the job), or at once when now (their process ended). True when it
 * has them all.
 */
bool check_guard_hand_links(int fd, const int *links, size_t n, bool now);

/* The recorder let every process go: the guard lets go its links and leaves. */
void check_guard_release(int fd);

#endif
