/*
 * The recorder's guard against its own sudden death. A launched command's processes are stopped
 * by the BPF programs at each exec (and loader change) until the recorder has attached to them
 * and sent SIGCONT; if the recorder is SIGKILLed in that window, nobody would ever send it. The
 * guard is a small process forked before the command starts that waits on a pipe: when the
 * recorder ends without releasing it, it continues the job (the recorder's process group, where
 * the command runs) and removes the unfinished trace.
 */
#ifndef CLOSURETRACE_CHECK_GUARD_H
#define CLOSURETRACE_CHECK_GUARD_H

/* Starts the guard. Returns the pipe to talk to it through, or -1 (unguarded). */
int check_guard_start(void);

/* The file the guard removes should the recorder die (NULL or "": none). */
void check_guard_unlink(int fd, const char *path);

/* The recorder let every process go: the guard leaves without doing anything. */
void check_guard_release(int fd);

#endif
