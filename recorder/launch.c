/* Launching a held command: see launch.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "mem_limit.h"

static int is_executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

char *launch_resolve(const char *file)
{
	const char *path_env = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (strchr(file, '/')) {
		if (!is_executable(file)) {
			if (!errno || errno == EISDIR)
				errno = EACCES;
			return NULL;
		}
		return realpath(file, NULL);
	}
	copy = strdup(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *candidate;

		if (asprintf(&candidate, "%s/%s", *dir ? dir : ".", file) < 0)
			break;
		if (is_executable(candidate))
			found = realpath(candidate, NULL);
		free(candidate);
	}
	free(copy);
	if (!found)
		errno = ENOENT;
	return found;
}

int launch_start(struct launch *l, char *path, char *const *argv)
{
	int gate[2];
	char byte;

	l->path = path;
	/* A socket, not a pipe: a send to a child already killed fails (EPIPE), raising no SIGPIPE.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate))
		return -1;
	l->pid = fork();
	if (l->pid < 0) {
		close(gate[0]);
		close(gate[1]);
		return -1;
	}
	if (l->pid == 0) {
		int ours = STDERR_FILENO;
		sigset_t none;

		close(gate[1]);
		/* EOF instead of a byte: the recorder gave up (or died); run nothing. */
		if (read(gate[0], &byte, 1) != 1)
			_exit(127);
		/* Ours kept aside (close-on-exec) for our message, should the exec fail. */
		if (l->stderr_fd)
			ours = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (l->stderr_fd > 0 && dup2(l->stderr_fd, STDERR_FILENO) < 0)
			_exit(127);
		if (l->stderr_fd < 0)
			close(STDERR_FILENO);
		if (l->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		mem_limit_restore(); /* the command's memory is its own, not under ours */
		execv(path, argv);
		dprintf(ours, "closuretrace: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	l->gate = gate[1];
	return 0;
}

int launch_release(struct launch *l)
{
	char byte = 1;
	int err = 0;

	if (l->gate < 0)
		return 0;
	if (send(l->gate, &byte, 1, MSG_NOSIGNAL) != 1)
		err = -errno;
	close(l->gate);
	l->gate = -1;
	return err;
}

void launch_abort(struct launch *l)
{
	if (l->gate >= 0) {
		close(l->gate);
		l->gate = -1;
	}
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void launch_block_stop_signals(sigset_t *stop)
{
	sigemptyset(stop);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGTERM);
	sigprocmask(SIG_BLOCK, stop, NULL);
}

void launch_exit_of(int status, int *exit_code, int *signal)
{
	*exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	*signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}
