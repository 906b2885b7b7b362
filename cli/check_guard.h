/*
 * check's guard against its own sudden death. In follow mode a process of the command that exec'ed
 * is stopped by the BPF program until check has attached to it and sent SIGCONT; if check is
 * SIGKILLed in that window, nobody would ever send it. The guard is a small process forked before
 * the command starts that waits on a pipe: when check ends without releasing it, it continues the
 * job (check's process group, where the command runs) and removes the temporary trace.
 */
#ifndef CLOSURETRACE_CHECK_GUARD_H
#define CLOSURETRACE_CHECK_GUARD_H

/* Starts the guard; temp_trace is removed if check dies ("" or NULL: nothing to remove). Returns
 * the pipe to release it through, or -1 (check goes on unguarded). */
int check_guard_start(const char *temp_trace);

/* Check finished its run and let every process go: the guard leaves without doing anything. */
void check_guard_release(int fd);

#endif
