/*
 * Starting a command held before it runs any code of its own: fork, the child waits on a pipe,
 * the recorder attaches its probes, then lets it exec. No ptrace: the command may be debugged.
 */
#ifndef CLOSURETRACE_LAUNCH_H
#define CLOSURETRACE_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;	       /* the child, waiting to exec */
	int gate;	       /* our end of the socket pair it waits on; -1 once released */
	char *path;	       /* the resolved executable: exec'ed and attached to (borrowed) */
	bool stdout_to_stderr; /* its standard output is ours on standard error (a trace on stdout)
				*/
	/* Its standard error when ours is not its (check --log-file): > 0, this descriptor (ours,
	 * close-on-exec); -1, closed; 0: ours. Our own "cannot run" goes to ours. */
	int stderr_fd;
};

/*
 * Resolves argv[0] as execvp would (into a path). Returns NULL with errno set when there is no
 * such executable. The string is malloc'ed.
 */
char *launch_resolve(const char *file);

/* Forks the held child for argv, to exec path. 0, or -1 with errno set. */
int launch_start(struct launch *l, char *path, char *const *argv);

/*
 * Lets the child exec. 0, or -errno: -EPIPE when the child is gone already (killed while the
 * recorder attached; its status is reaped as any other exit's).
 */
int launch_release(struct launch *l);

/* Makes the child exit without running anything (the pipe closes), and reaps it. */
void launch_abort(struct launch *l);

/* The stop signals (SIGINT, SIGTERM) into *stop, blocked: from now on they wait for the event
 * loop's signalfd, whenever they come (a launched command unblocks them for itself). */
void launch_block_stop_signals(sigset_t *stop);

/* A command's wait status as an exit code (-1: none) and the signal that killed it (0: none). */
void launch_exit_of(int status, int *exit_code, int *signal);

#endif
