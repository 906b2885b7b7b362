/*
 * ct_kill_at_attach CLOSURETRACE ARGS...: runs the recorder and SIGKILLs the command it launches
 * while the recorder attaches (the child is still the recorder's fork, held before its exec).
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

/*
 * Whether pid still runs the recorder's image under its name (not yet exec'ed; the guard process
 * of check renames itself closuretrace-gd).
 */
static int is_held(pid_t pid, const char *recorder)
{
	char path[64], exe[4096], comm[64] = "";
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return !strcmp(exe, recorder) && !strcmp(comm, "closuretrace\n");
}

/* The child of pid held before its exec, or 0. */
static pid_t held_child_of(pid_t pid, const char *recorder)
{
	char path[64];
	int child, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fscanf(f, "%d", &child) == 1)
		if (is_held(child, recorder))
			found = child;
	fclose(f);
	return found;
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
			/* Still so 2 ms later: not check's guard, which renames itself at once. */
			struct timespec settle = {0, 2000000};

			nanosleep(&settle, NULL);
			if (!is_held(child, recorder))
				continue;
			kill(child, SIGKILL);
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
