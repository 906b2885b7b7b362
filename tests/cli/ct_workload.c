/*
 * The recorder's test workload: closure operations in known numbers. Every line that calls the
 * closure API carries a SITE marker, so that a test can check each call site's file:line.
 *
 *   ct_workload counts N       N rounds of every kind of operation; prints the probe counts
 *   ct_workload threads T N    T threads, each N get/put pairs on its own stack closure
 *   ct_workload held           a closure with count 3 before "go" on stdin, then finishes it
 *   ct_workload dlopen LIB N   dlopen(LIB) at once; after "go" on stdin, LIB's plugin_run(N)
 *   ct_workload dlopen_now LIB N   the same without waiting: plugin_run(N) right after dlopen
 *   ct_workload dlopen_later LIB N   after "go" on stdin, dlopen(LIB) and plugin_run(N); "ran"
 *   ct_workload spin           get/put until killed
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <closure.h>

/* Keeps a call from becoming a tail call, whose return address would be the caller's caller. */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

enum { INIT, GET, PUT, SUB, CONTINUE_AT, RUN, FINISH, DESTRUCTOR, WAIT, WAKE, SYNC_B, SYNC_E };
static const char *const names[] = {"init",	   "get",  "put",	 "sub",
				    "continue_at", "run",  "finish",	 "destructor",
				    "wait",	   "wake", "sync_begin", "sync_end"};

static int destroyed;

static void item_free(struct closure *cl)
{
	(void)cl;
	destroyed++;
}

static void item_step2(struct closure *cl)
{
	closure_return_with_destructor(cl, item_free); /* SITE return_with_destructor */
	NO_TAIL_CALL();
}

/* One round: every operation but sync, on a child of the stack closure. */
static void round_trip(struct closure *item, struct closure *stack, struct closure_waitlist *wl)
{
	closure_init(item, stack);	 /* SITE init */
	closure_get(item);		 /* SITE get */
	closure_get(item);		 /* SITE get */
	if (!closure_get_not_zero(item)) /* SITE get_not_zero */
		abort();
	closure_put(item);		     /* SITE put */
	closure_put(item);		     /* SITE put */
	closure_sub(item, 1);		     /* SITE sub */
	closure_wait(wl, stack);	     /* SITE wait */
	closure_wake_up(wl);		     /* SITE wake */
	continue_at(item, item_step2, NULL); /* SITE continue_at */
	NO_TAIL_CALL();
}

static int counts(long n)
{
	struct closure_waitlist wl = CLOSURE_WAITLIST_INIT;
	struct closure *items = calloc(n, sizeof(*items));
	struct closure stack;
	long c[12] = {0};

	closure_init_stack(&stack); /* SITE init_stack */
	for (long i = 0; i < n; i++)
		round_trip(&items[i], &stack, &wl);
	closure_sync(&stack); /* SITE sync */
	NO_TAIL_CALL();
	if (destroyed != n)
		abort();
	/* What the rounds above fire, probe by probe (docs/probes.md). */
	c[INIT] = n + 1;	/* each item, and the stack closure */
	c[GET] = 4 * n;		/* 2 get, 1 get_not_zero, and init's reference on the parent */
	c[PUT] = 3 * n;		/* 2 put, and the finished item's put on its parent */
	c[SUB] = n;		/* closure_sub */
	c[CONTINUE_AT] = 2 * n; /* continue_at, closure_return_with_destructor */
	c[RUN] = n;		/* item_step2 */
	c[FINISH] = n;
	c[DESTRUCTOR] = n;
	c[WAIT] = n;
	c[WAKE] = n;
	c[SYNC_B] = 1;
	c[SYNC_E] = 1;
	for (int k = 0; k < 12; k++)
		printf("%s %ld\n", names[k], c[k]);
	free(items);
	return 0;
}

static long per_thread;

static void *thread_main(void *arg)
{
	struct closure stack;

	(void)arg;
	closure_init_stack(&stack); /* SITE init_stack */
	for (long i = 0; i < per_thread; i++) {
		closure_get(&stack); /* SITE get */
		closure_put(&stack); /* SITE put */
	}
	closure_sync(&stack); /* SITE sync */
	NO_TAIL_CALL();
	return NULL;
}

static int threads(int t, long n)
{
	pthread_t tids[64];

	per_thread = n;
	for (int i = 0; i < t; i++)
		pthread_create(&tids[i], NULL, thread_main, NULL);
	for (int i = 0; i < t; i++)
		pthread_join(tids[i], NULL);
	/* init_stack, 2 per round, sync_begin and sync_end: per thread */
	printf("events %ld\n", t * (2 * n + 3));
	return 0;
}

static void held_done(struct closure *cl)
{
	closure_return(cl); /* SITE return */
	NO_TAIL_CALL();
}

static int held(void)
{
	static struct closure cl;
	char line[16];

	closure_init(&cl, NULL); /* SITE init */
	closure_get(&cl);	 /* SITE get */
	closure_get(&cl);	 /* SITE get */
	printf("ready %p\n", (void *)&cl);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	closure_get(&cl);		   /* SITE get */
	closure_put(&cl);		   /* SITE put */
	closure_put(&cl);		   /* SITE put */
	closure_put(&cl);		   /* SITE put */
	continue_at(&cl, held_done, NULL); /* SITE continue_at */
	NO_TAIL_CALL();
	return 0;
}

static int with_plugin(const char *lib, long n, bool wait_go)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*run)(long);
	char line[16];

	if (!h) {
		fprintf(stderr, "ct_workload: %s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "plugin_run");
	if (!run)
		return 1;
	if (wait_go) {
		printf("loaded\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	run(n);
	return 0;
}

static __attribute__((noreturn)) void spin(void)
{
	struct closure stack;

	closure_init_stack(&stack); /* SITE init_stack */
	printf("spinning %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		closure_get(&stack); /* SITE get */
		closure_put(&stack); /* SITE put */
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "counts"))
		return counts(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "held"))
		return held();
	if (argc == 4 && !strcmp(argv[1], "dlopen"))
		return with_plugin(argv[2], atol(argv[3]), true);
	if (argc == 4 && !strcmp(argv[1], "dlopen_now"))
		return with_plugin(argv[2], atol(argv[3]), false);
	if (argc == 4 && !strcmp(argv[1], "dlopen_later")) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin) || with_plugin(argv[2], atol(argv[3]), false))
			return 1;
		printf("ran\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "spin"))
		spin();
	fprintf(stderr,
		"usage: ct_workload counts N | threads T N | held | dlopen[_now|_later] LIB N | "
		"spin\n");
	return 2;
}
