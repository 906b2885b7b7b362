/*
 * The traced program of the batch tests (tests/suites/batch/batch_test.sh). Every mode does a known
 * number of operations; the comments say how many, the test script holds the arithmetic.
 *
 *   bt_prog loop N          N get/put pairs on one closure (init, get N, put N, continue_at 1)
 *   bt_prog threads T N     T threads, each N get/put pairs on a closure of its own, exiting with
 *                           its records still buffered (fewer than a buffer, no blocking call)
 *   bt_prog pingpong N      two threads alternate: A gets, B puts, N times, handing over with a
 *                           semaphore (no closure call blocks, so their records leave late)
 *   bt_prog held N          prints "ready", waits for SIGUSR1 (its tracer is attached), does N
 *                           get/put pairs, prints "done" and sleeps without a closure call: the
 *                           records stay buffered
 *   bt_prog polled N        as held, then N pairs 3 ms apart and a closure_sync that blocks
 *                           5 ms (init, N + 1 pairs, sync); prints "handed H" (the records the
 *                           process handed over) and "done"; at a second SIGUSR1 prints
 *                           "polled_until T" (the registry's)
 *   bt_prog fork N          a child does N pairs and exits, another execs "loop N", then
 *                           the parent does N pairs: 3 closures in 3 processes
 *   bt_prog killed N        N pairs, a get, a closure_sync that sleeps until another thread
 *                           puts it (both handed over), N more pairs, then SIGKILL: those and
 *                           the sync's end are still buffered when the process dies
 *   bt_prog exec N          init and N pairs (never returned), still buffered, then execs
 *                           "loop N": 2 inits, 2N pairs, 1 closure that finishes
 *   bt_prog execfail N      init and N pairs, an exec that fails, N more pairs, return
 *   bt_prog idle N          thread A inits a closure and takes a ref, then blocks in read() with
 *                           both buffered while thread B does N pairs 1 ms apart on its own;
 *                           then A puts and both return: 2 closures, N + 1 pairs
 *   bt_prog burst T N       as held: "ready", SIGUSR1, then "threads T N", "done", sleeps
 *   bt_prog killself N      a closure of N pairs, then SIGKILL: its records still buffered
 *   bt_prog abrupt T N      T threads each do a closure of N pairs and stay (no closure call);
 *                           then the main thread does one and SIGKILLs the process: T + 1
 *                           closures, each with records still buffered
 *   bt_prog forkkill N      a closure (N < 126: still buffered), then a child that does one and
 *                           SIGKILLs itself, a child that does one and execs "killself N", then
 *                           the parent's second one and SIGKILL: 5 closures in 3 processes
 *                           (1 in the first child, 2 in the second: one per image, 2 in the parent)
 *   bt_prog twice M K       for two recordings of the running process: "ready", SIGUSR1 (the
 *                           first recording is attached), then thread W inits a closure and
 *                           does M pairs, thread S the same (both left buffered: the recorder
 *                           polls, so the library hands nothing over by age);
 *                           prints "buffered W S" (their buffers' counts) and "done"; SIGUSR1
 *                           again (the second recording is attached): W does K pairs at the
 *                           "SITE twice" lines and sleeps in sem_wait; prints "buffered W S" and
 *                           "done"; sleeps. The second recording must see W's 2K records alone.
 *   bt_prog twicekill M K   as twice, but SIGKILLs itself at once after the second "done"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "closure.h"
#include "closure_batch.h"

static void pairs(struct closure *cl, long n)
{
	for (long i = 0; i < n; i++) {
		closure_get(cl); /* SITE get */
		closure_put(cl); /* SITE put */
	}
}

/* init, 2n events, continue_at: a closure that finishes (return: finish too). */
static void one_closure(long n)
{
	struct closure cl;

	closure_init(&cl, NULL); /* SITE init */
	pairs(&cl, n);
	closure_return(&cl); /* SITE return */
}

static void *thread_main(void *arg)
{
	one_closure((long)arg);
	return NULL; /* exits with its records still buffered */
}

static int threads(int t, long n)
{
	pthread_t tids[64];

	if (t > 64)
		t = 64;
	for (int i = 0; i < t; i++)
		pthread_create(&tids[i], NULL, thread_main, (void *)n);
	for (int i = 0; i < t; i++)
		pthread_join(tids[i], NULL);
	return 0;
}

static struct closure shared;
static sem_t to_b, to_a;
static long rounds;

static void *putter(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		sem_wait(&to_b);
		closure_put(&shared); /* SITE put */
		sem_post(&to_a);
	}
	return NULL;
}

/* The count of shared alternates 2 (get, thread A) and 1 (put, thread B), in time order. */
static int pingpong(long n)
{
	pthread_t b;

	rounds = n;
	sem_init(&to_b, 0, 0);
	sem_init(&to_a, 0, 0);
	closure_init(&shared, NULL); /* SITE init */
	pthread_create(&b, NULL, putter, NULL);
	for (long i = 0; i < n; i++) {
		closure_get(&shared); /* SITE get */
		sem_post(&to_b);
		sem_wait(&to_a);
	}
	pthread_join(b, NULL);
	closure_return(&shared); /* SITE return */
	return 0;
}

/*
 * Prints "ready" and waits for SIGUSR1: the test sends it once its recorder is attached. (Waiting
 * for the batch semaphore is not enough: another tracer of the same libclosure, system-wide,
 * raises it too, and the records would then precede this recording.)
 */
static int wait_go(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	printf("ready\n");
	fflush(stdout);
	return sigwait(&usr1, &sig) || !*closure_batch_active ? 3 : 0;
}

static int held(long n)
{
	struct closure cl;

	if (wait_go())
		return 3;
	closure_init(&cl, NULL); /* SITE init */
	pairs(&cl, n);
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause(); /* records stay in the buffer: only a drain finds them */
}

#ifdef BT_STATIC
extern struct closure_batch_registry closure_batch_registry; /* hidden, but linked in */
#endif

/*
 * libclosure's registry, as a recorder finds it (dlsym finds the one libclosure.so exports; a
 * reference linked in would be a copy), or NULL.
 */
static const struct closure_batch_registry *registry(void)
{
#ifdef BT_STATIC
	const struct closure_batch_registry *g = &closure_batch_registry;
#else
	const struct closure_batch_registry *g =
		dlsym(RTLD_DEFAULT, "closure_batch_registry_public");
#endif

	return g && g->magic == CLOSURE_BATCH_MAGIC ? g : NULL;
}

/* The records this process has handed over so far, or -1. */
static long long handed(void)
{
	return registry() ? (long long)registry()->handed : -1;
}

static void *late_put_5ms(void *arg)
{
	usleep(5 * 1000);
	closure_put(arg); /* SITE polled-late-put */
	return NULL;
}

/*
 * Operations spread over time, as a service's are: N pairs 3 ms apart (each record older than
 * the age bound at the next), then a closure_sync that blocks 5 ms. Prints what the process has
 * handed over (nothing, while a recorder polls) and "done", then waits for SIGUSR1 again and
 * prints the registry's polled_until (0 once the recorder has stopped).
 */
static int polled(long n)
{
	struct timespec gap = {0, 3 * 1000 * 1000};
	struct closure cl, wait;
	pthread_t t;
	sigset_t usr1;
	int sig;

	if (wait_go())
		return 3;
	closure_init(&cl, NULL); /* SITE polled-init */
	for (long i = 0; i < n; i++) {
		closure_get(&cl); /* SITE polled-get */
		closure_put(&cl); /* SITE polled-put */
		nanosleep(&gap, NULL);
	}
	closure_init_stack(&wait); /* SITE polled-init-stack */
	closure_get(&wait);	   /* SITE polled-get-stack */
	pthread_create(&t, NULL, late_put_5ms, &wait);
	closure_sync(&wait); /* SITE polled-sync */
	pthread_join(t, NULL);
	closure_return(&cl); /* SITE polled-return */
	printf("handed %lld\ndone\n", handed());
	fflush(stdout);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigwait(&usr1, &sig))
		return 3;
	printf("polled_until %lld\n", registry() ? (long long)registry()->polled_until : -1);
	fflush(stdout);
	for (;;)
		pause();
}

/* A child that does its closure and exits; a child that execs "loop N"; then the parent's. */
static int forked(const char *self, long n)
{
	char arg[32];
	pid_t a, b;
	int sa, sb;

	a = fork();
	if (a == 0) {
		one_closure(n);
		exit(0); /* exit handlers hand its records over */
	}
	snprintf(arg, sizeof(arg), "%ld", n);
	b = fork();
	if (b == 0) {
		execl(self, self, "loop", arg, (char *)NULL);
		_exit(127);
	}
	one_closure(n);
	if (a < 0 || b < 0 || waitpid(a, &sa, 0) != a || waitpid(b, &sb, 0) != b)
		return 1;
	return WIFEXITED(sa) && WIFEXITED(sb) ? WEXITSTATUS(sa) | WEXITSTATUS(sb) : 1;
}

static void *late_put(void *arg)
{
	usleep(50 * 1000);
	closure_put(arg); /* SITE put: its thread exits with it, handing it over */
	return NULL;
}

static int killed(long n)
{
	struct closure cl;
	pthread_t t;

	closure_init_stack(&cl); /* SITE init */
	pairs(&cl, n);
	closure_get(&cl); /* SITE get: put by late_put */
	pthread_create(&t, NULL, late_put, &cl);
	closure_sync(&cl);     /* SITE sync: sleeps, so it hands the records over first */
	pthread_join(t, NULL); /* late_put's thread has handed its put over at its exit */
	pairs(&cl, n);	       /* still buffered when the process dies */
	raise(SIGKILL);
	return 1;
}

/* Records still buffered at an exec: the old image's last ones. */
static int exec_buffered(const char *self, long n, bool fail)
{
	struct closure cl;
	char arg[32];

	closure_init(&cl, NULL); /* SITE init */
	pairs(&cl, n);
	snprintf(arg, sizeof(arg), "%ld", n);
	if (!fail) {
		execl(self, self, "loop", arg, (char *)NULL);
		return 127;
	}
	execl("/nonexistent/bt_prog", "bt_prog", (char *)NULL); /* fails: the buffer stays */
	pairs(&cl, n);
	closure_return(&cl); /* SITE return */
	return 0;
}

static int idle_pipe[2];
static sem_t idle_ready;

static void *idler(void *arg)
{
	struct closure *cl = arg;
	char c;

	closure_get(cl); /* SITE get */
	sem_post(&idle_ready);
	if (read(idle_pipe[0], &c, 1) != 1) /* blocks outside libclosure: nothing handed over */
		return NULL;
	closure_put(cl); /* SITE put */
	return NULL;
}

static int idle(long n)
{
	struct closure a, b;
	pthread_t t;

	if (pipe(idle_pipe))
		return 1;
	sem_init(&idle_ready, 0, 0);
	closure_init(&a, NULL); /* SITE init */
	pthread_create(&t, NULL, idler, &a);
	sem_wait(&idle_ready);
	closure_init(&b, NULL); /* SITE init */
	for (long i = 0; i < n; i++) {
		closure_get(&b); /* SITE get */
		closure_put(&b); /* SITE put */
		usleep(1000);
	}
	closure_return(&b); /* SITE return */
	if (write(idle_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	closure_return(&a); /* SITE return */
	return 0;
}

static int burst(int t, long n)
{
	if (wait_go())
		return 3;
	threads(t, n);
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
}

static sem_t stayed;

static void *stay(void *arg)
{
	one_closure((long)arg);
	sem_post(&stayed);
	for (;;)
		pause(); /* alive, its records in its buffer */
	return NULL;
}

static int abrupt(int t, long n)
{
	pthread_t tid;

	sem_init(&stayed, 0, 0);
	for (int i = 0; i < t; i++)
		pthread_create(&tid, NULL, stay, (void *)n);
	for (int i = 0; i < t; i++)
		while (sem_wait(&stayed))
			;
	one_closure(n);
	raise(SIGKILL);
	return 1;
}

/* The first closure is in the buffer a child's fork shares: the child must not write it. */
static int forkkill(const char *self, long n)
{
	char arg[32];
	pid_t a, b;

	one_closure(n);
	a = fork();
	if (a == 0) {
		one_closure(n);
		raise(SIGKILL);
	}
	snprintf(arg, sizeof(arg), "%ld", n);
	b = fork();
	if (b == 0) {
		one_closure(n); /* still buffered at the exec */
		execl(self, self, "killself", arg, (char *)NULL);
		_exit(127);
	}
	one_closure(n);
	if (a < 0 || b < 0 || waitpid(a, NULL, 0) != a || waitpid(b, NULL, 0) != b)
		return 1;
	raise(SIGKILL);
	return 1;
}

static sem_t twice_go[2], twice_done;
static pid_t twice_tid[2];
static long twice_m, twice_k;

/* W: records of the first recording left in its buffer, K pairs more in the second. */
static void *twice_w(void *arg)
{
	struct closure cl;

	(void)arg;
	twice_tid[0] = gettid();
	while (sem_wait(&twice_go[0]))
		;
	closure_init(&cl, NULL); /* SITE init */
	pairs(&cl, twice_m);
	sem_post(&twice_done);
	while (sem_wait(&twice_go[0]))
		;
	for (long i = 0; i < twice_k; i++) {
		closure_get(&cl); /* SITE twice-get */
		closure_put(&cl); /* SITE twice-put */
	}
	sem_post(&twice_done);
	for (;;)
		sem_wait(&twice_go[0]); /* a wait outside libclosure: nothing handed over */
	return NULL;
}

/* S: records of the first recording left in its buffer, nothing in the second. */
static void *twice_s(void *arg)
{
	struct closure cl;

	(void)arg;
	twice_tid[1] = gettid();
	while (sem_wait(&twice_go[1]))
		;
	closure_init(&cl, NULL); /* SITE init */
	pairs(&cl, twice_m);
	sem_post(&twice_done);
	for (;;)
		pause();
	return NULL;
}

/* The records in thread tid's buffer, or -1. */
static long buffered(pid_t tid)
{
	const struct closure_batch_registry *g = registry();

	if (!g)
		return -1;
	for (const struct closure_batch_buf *b = g->head; b; b = b->next)
		if (b->owner == 1 && b->tid == (uint32_t)tid)
			return b->n;
	return -1;
}

static int twice(long m, long k, bool kill)
{
	pthread_t w, s;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL); /* for sigwait alone: the threads inherit it */
	twice_m = m;
	twice_k = k;
	sem_init(&twice_go[0], 0, 0);
	sem_init(&twice_go[1], 0, 0);
	sem_init(&twice_done, 0, 0);
	pthread_create(&w, NULL, twice_w, NULL);
	pthread_create(&s, NULL, twice_s, NULL);
	for (int round = 0; round < 2; round++) {
		if (wait_go())
			return 3;
		for (int t = 0; t < 2 - round; t++) {
			sem_post(&twice_go[t]);
			while (sem_wait(&twice_done))
				;
		}
		printf("buffered %ld %ld\ndone\n", buffered(twice_tid[0]), buffered(twice_tid[1]));
		fflush(stdout);
	}
	if (kill)
		raise(SIGKILL); /* W's records still buffered: no poll has read them yet */
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[argc - 1]) : 0;

	if (argc == 3 && !strcmp(argv[1], "loop"))
		return one_closure(n), 0;
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), n);
	if (argc == 3 && !strcmp(argv[1], "pingpong"))
		return pingpong(n);
	if (argc == 3 && !strcmp(argv[1], "held"))
		return held(n);
	if (argc == 3 && !strcmp(argv[1], "polled"))
		return polled(n);
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return forked(argv[0], n);
	if (argc == 3 && !strcmp(argv[1], "killed"))
		return killed(n);
	if (argc == 3 && (!strcmp(argv[1], "exec") || !strcmp(argv[1], "execfail")))
		return exec_buffered(argv[0], n, !strcmp(argv[1], "execfail"));
	if (argc == 3 && !strcmp(argv[1], "idle"))
		return idle(n);
	if (argc == 4 && !strcmp(argv[1], "burst"))
		return burst(atoi(argv[2]), n);
	if (argc == 3 && !strcmp(argv[1], "killself"))
		return one_closure(n), raise(SIGKILL), 1;
	if (argc == 4 && !strcmp(argv[1], "abrupt"))
		return abrupt(atoi(argv[2]), n);
	if (argc == 3 && !strcmp(argv[1], "forkkill"))
		return forkkill(argv[0], n);
	if (argc == 4 && (!strcmp(argv[1], "twice") || !strcmp(argv[1], "twicekill")))
		return twice(atol(argv[2]), n, !strcmp(argv[1], "twicekill"));
	fprintf(stderr, "usage: bt_prog "
			"loop|pingpong|held|polled|fork|killed|killself|forkkill|exec|execfail|"
			"idle N | threads|burst|abrupt T N | twice|twicekill M K\n");
	return 2;
}
