/*
 * ct_kill_at_attach CLOSURETRACE ARGS...: runs the recorder and SIGKILLs the command it launches
 * while the recorder attaches (the child is still the recorder's fork, held before its exec).
 * The recorder is stopped meanwhile (SIGSTOP, then SIGCONT), so that the kill lands before any
 * release, however loaded the machine.
 * Prints "killed" once it did, then exits with the recorder's status (128+N for signal N).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Whether pid still runs the recorder's image (not yet exec'ed). */
static int is_held(pid_t pid, const char *recorder)
{
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return !strcmp(exe, recorder);
}

/*
 * The launched command while it is held before its exec, or 0. The recorder forks its guard
 * first (check_guard.c), then the command: the command is its second child, still running the
 * recorder's image.
 */
static pid_t held_child_of(pid_t pid, const char *recorder)
{
	char path[64];
	int child, n = 0, second = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%d", &child) == 1)
		if (++n == 2)
			second = child;
	fclose(f);
	return second && is_held(second, recorder) ? second : 0;
}

int main(int argc, char **argv)
{
	char recorder[4096];
	pid_t pid, child;
	int status;

	if (argc < 2 || !realpath(argv[1], recorder)) {
		fprintf(stderr, "usage: ct_kill_at_attach CLOSURETRACE ARGS...\n");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	for (;;) {
		struct timespec nap = {0, 100000};

		child = held_child_of(pid, recorder);
		if (child) {
			/*
			 * The recorder stopped, so that it cannot let the command go; 50 ms later
			 * the command still runs the recorder's image: no release was on its way (a
			 * released command execs at once). Then killed, and the recorder goes on.
			 */
			struct timespec settle = {0, 50000000};

			kill(pid, SIGSTOP);
			nanosleep(&settle, NULL);
			if (!is_held(child, recorder)) {
				kill(pid, SIGCONT);
				printf("not killed: the command started first\n");
				waitpid(pid, &status, 0);
				return 3;
			}
			kill(child, SIGKILL);
			kill(pid, SIGCONT);
			printf("killed\n");
			fflush(stdout);
			break;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			printf("not killed: the recorder ended first\n");
			return 3;
		}
		nanosleep(&nap, NULL);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
