/*
 * check's test program: single-threaded closures in known shapes, so that every verdict is exact.
 * Lines that a test expects in a diagnostic carry a marker comment (LEAK_A, ...).
 *
 *   ck_prog clean            20 closures under one parent, all finished; echoes its input's size
 *   ck_prog leak_a [N]       as clean, and N (1) of them take one reference too many
 *   ck_prog leak_b           as clean, and one of another kind misses its put
 *   ck_prog both             leak_a and leak_b
 *   ck_prog exit N           leak_a, then exit with status N
 *   ck_prog segv             a few closures, then a NULL write
 *   ck_prog wait PIDFILE     writes its pid to PIDFILE, then sleeps (to be killed)
 *   ck_prog stuck            sleeps in closure_sync while another thread makes it exit
 *   ck_prog hang             waits in closure_sync forever: a child misses its put (--timeout)
 *   ck_prog many N           N closures at full speed (to overflow a small ring buffer)
 *   ck_prog waitlist         a closure waits on a waitlist that nobody wakes
 *   ck_prog fork LEAK        forks; parent and child each run a closure at the same address, their
 *                            operations interleaved; with LEAK 1 the child's takes one too many
 *   ck_prog fork_now N       forks a child that runs a closure with N get/put pairs from its first
 *                            instruction (batches handed over within microseconds of the fork)
 *   ck_prog thread_exec CMD [ARGS...]
 *                            one closure, then a second thread execs CMD (the process's id passes
 *                            to that thread)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <closure.h>

#define ROUNDS 20

/* Leaked closures stay reachable from here, so that LeakSanitizer does not count them. */
static struct closure *kept[64];
static unsigned nkept;

/* Single-threaded: a closure has finished as soon as its last reference is put. */
static void keep(struct closure *cl)
{
	if (!closure_nr_remaining(cl))
		free(cl);
	else if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = cl;
}

/* Kind A: takes a reference and puts it back; with extra, takes one more (the planted leak). */
static void request_a(struct closure *parent, int extra)
{
	struct closure *cl = malloc(sizeof(*cl));

	closure_init(cl, parent); /* INIT_A */
	closure_get(cl);
	if (extra)
		closure_get(cl); /* LEAK_A */
	closure_put(cl);
	closure_return(cl);
	keep(cl);
}

/* Kind B: takes a reference and puts it back, unless told to forget the put. */
static void request_b(struct closure *parent, int forget)
{
	struct closure *cl = malloc(sizeof(*cl));

	closure_init(cl, parent); /* INIT_B */
	closure_get(cl);
	if (!forget)
		closure_put(cl); /* LEAK_B */
	closure_return(cl);
	keep(cl);
}

/* ROUNDS of each kind under one parent; leak_a of kind A and leak_b of kind B leak. */
static void batch(unsigned leak_a, unsigned leak_b)
{
	struct closure *parent = malloc(sizeof(*parent));

	closure_init(parent, NULL); /* INIT_PARENT */
	for (unsigned i = 0; i < ROUNDS; i++) {
		request_a(parent, i < leak_a);
		request_b(parent, i < leak_b);
	}
	closure_return(parent);
	keep(parent);
}

/* Output a test compares byte for byte: stdout, stderr, and what came in on stdin. */
static void chatter(void)
{
	char buf[4096];
	size_t n, total = 0;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		total += n;
	printf("ck_prog: stdin had %zu bytes\n", total);
	fputs("ck_prog: no newline at the end", stdout);
	fprintf(stderr, "ck_prog: to stderr\n");
}

static void *exit_soon(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	exit(0);
}

static void never_woken(void)
{
	static struct closure_waitlist list;
	struct closure *cl = malloc(sizeof(*cl));

	closure_init(cl, NULL);	 /* INIT_WAIT */
	closure_wait(&list, cl); /* WAIT_STUCK */
	closure_return(cl);
	keep(cl);
}

static void stuck(void)
{
	struct closure cl;
	pthread_t t;

	closure_init_stack(&cl); /* INIT_STUCK */
	closure_get(&cl);	 /* TAKE_STUCK */
	pthread_create(&t, NULL, exit_soon, NULL);
	closure_sync(&cl); /* SYNC_STUCK */
}

/* A child holds a reference whose put never comes (TAKE_HANG): closure_sync never ends. */
static void hang(void)
{
	struct closure cl, *child = malloc(sizeof(*child));

	closure_init_stack(&cl);  /* INIT_HANG */
	closure_init(child, &cl); /* CHILD_HANG */
	closure_get(child);	  /* TAKE_HANG */
	closure_return(child);
	closure_sync(&cl); /* SYNC_HANG */
	keep(child);
}

/* One step of a two-process lockstep: wait for the other's byte, or send one. */
static void await(int fd)
{
	char byte;

	if (read(fd, &byte, 1) != 1)
		_exit(3);
}

static void wake(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(3);
}

/*
 * Parent and child (first or not) take turns, one step each: init, get, put and return. A child
 * forked without exec has its parent's addresses, so both closures sit at the same address and
 * only the process of each event tells their operations apart.
 */
static void forked_closure(int first, int leak, int in, int out)
{
	struct closure *cl = malloc(sizeof(*cl));

	for (int step = 0; step < 3; step++) {
		if (!first)
			await(in);
		if (step == 0) {
			closure_init(cl, NULL); /* INIT_FORK */
		} else if (step == 1) {
			closure_get(cl);
			if (leak)
				closure_get(cl); /* LEAK_FORK */
		} else {
			closure_put(cl);
			closure_return(cl);
		}
		wake(out);
		if (first)
			await(in);
	}
	keep(cl);
}

static int fork_pair(int leak)
{
	int to_child[2], to_parent[2], status;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return 3;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		forked_closure(0, leak, to_child[0], to_parent[1]);
		exit(0);
	}
	forked_closure(1, 0, to_parent[0], to_child[1]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

/* The child's closure work starts as the fork returns: nothing may be missed before its links. */
static int fork_now(long n)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 3;
	if (pid == 0) {
		struct closure *cl = malloc(sizeof(*cl));

		closure_init(cl, NULL);
		for (long i = 0; i < n; i++) {
			closure_get(cl);
			closure_put(cl);
		}
		closure_return(cl);
		keep(cl);
		exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

static char **exec_argv;

static void *exec_cmd(void *arg)
{
	(void)arg;
	execv(exec_argv[0], exec_argv);
	_exit(127);
}

/* An exec by a thread other than the first: the process keeps its id, its first task is gone. */
static int thread_exec(char **argv)
{
	struct closure cl;
	pthread_t t;

	closure_init_stack(&cl);
	closure_get(&cl);
	closure_put(&cl);
	closure_sync(&cl);
	exec_argv = argv;
	if (pthread_create(&t, NULL, exec_cmd, NULL))
		return 3;
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";

	if (!strcmp(mode, "clean")) {
		chatter();
		batch(0, 0);
	} else if (!strcmp(mode, "leak_a")) {
		batch(argc > 2 ? (unsigned)atoi(argv[2]) : 1, 0);
	} else if (!strcmp(mode, "leak_chatter")) {
		chatter(); /* known bytes on stdout and stderr, then the leak of leak_a */
		batch(1, 0);
	} else if (!strcmp(mode, "leak_b")) {
		batch(0, 1);
	} else if (!strcmp(mode, "both")) {
		batch(1, 1);
	} else if (!strcmp(mode, "exit") && argc > 2) {
		batch(1, 0);
		return atoi(argv[2]);
	} else if (!strcmp(mode, "segv")) {
		batch(0, 0);
		*(volatile int *)(uintptr_t)(argc * 64) = 0; /* in the unmapped first page */
	} else if (!strcmp(mode, "wait") && argc > 2) {
		FILE *f = fopen(argv[2], "w");

		batch(0, 0);
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		sleep(30);
	} else if (!strcmp(mode, "many") && argc > 2) {
		for (int i = atoi(argv[2]); i > 0; i -= 2 * ROUNDS)
			batch(0, 0);
	} else if (!strcmp(mode, "fork") && argc > 2) {
		return fork_pair(atoi(argv[2]));
	} else if (!strcmp(mode, "fork_now") && argc > 2) {
		return fork_now(atol(argv[2]));
	} else if (!strcmp(mode, "thread_exec") && argc > 2) {
		return thread_exec(argv + 2);
	} else if (!strcmp(mode, "hang_plain")) {
		/* Hangs on no closure: its own wait, while one of kind B holds what its peers put.
		 */
		struct closure *parent = malloc(sizeof(*parent));

		closure_init(parent, NULL); /* INIT_PLAIN */
		for (unsigned i = 0; i < ROUNDS; i++)
			request_b(parent, 0);
		request_b(parent, 1);
		for (;;)
			pause(); /* HANG_PLAIN */
	} else if (!strcmp(mode, "waitlist")) {
		never_woken();
	} else if (!strcmp(mode, "stuck")) {
		stuck();
	} else if (!strcmp(mode, "hang")) {
		hang();
	} else {
		fprintf(stderr,
			"usage: ck_prog clean|leak_a [N]|leak_chatter|leak_b|both|exit N|segv|wait "
			"PIDFILE|stuck|hang|waitlist|many N|fork LEAK|fork_now N|thread_exec "
			"CMD...\n");
		return 2;
	}
	return 0;
}
