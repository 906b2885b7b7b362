/*
 * A program that hangs with closures alive, for `closuretrace ps`. Each marked line (L_...) is a
 * call site the test expects ps to name.
 *   ps_hang sync    main sleeps in closure_sync on a stack closure whose child never puts
 *   ps_hang tree    a parent with three identical children and one on a waitlist, forever
 *   ps_hang queue   a one-thread workqueue busy forever, and a closure queued behind it
 *   ps_hang chain N a chain of N closures, each the parent of the next, the last never put
 * Prints "ready" when everything is in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <closure.h>

static struct closure child, parent, kids[3], waiter, busy, queued;
static volatile int busy_running;
static struct closure_waitlist never_woken = CLOSURE_WAITLIST_INIT;

static void parent_done(struct closure *cl)
{
	closure_return(cl);
}

__attribute__((noinline)) static void start_child(struct closure *on)
{
	closure_init(&child, on); /* L_CHILD */
}

static void hang_in_sync(void)
{
	struct closure cl;

	closure_init_stack(&cl); /* L_STACK */
	start_child(&cl);
	printf("ready\n");
	fflush(stdout);
	closure_sync(&cl); /* L_SYNC */
}

static void hang_with_tree(void)
{
	closure_init(&parent, NULL); /* L_PARENT */
	for (int i = 0; i < 3; i++)
		closure_init(&kids[i], &parent); /* L_KIDS */
	closure_init(&waiter, &parent);		 /* L_WAITER */
	closure_wait(&never_woken, &waiter);	 /* L_WAIT */
	continue_at(&parent, parent_done, NULL); /* L_CONTINUE */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void block_forever(struct closure *cl)
{
	(void)cl;
	busy_running = 1;
	for (;;)
		pause();
}

static void never_runs(struct closure *cl)
{
	closure_return(cl);
}

static void hang_with_queue(void)
{
	struct workqueue *wq = workqueue_create("ps_hang", 1);

	closure_call(&busy, block_forever, wq, NULL); /* L_BUSY */
	while (!busy_running)
		usleep(1000);
	closure_call(&queued, never_runs, wq, NULL); /* L_QUEUED */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void hang_in_chain(long n)
{
	struct closure *chain = calloc((size_t)n, sizeof(*chain));

	if (!chain)
		exit(1);
	closure_init(&chain[0], NULL);
	for (long i = 1; i < n; i++)
		closure_init(&chain[i], &chain[i - 1]); /* L_LINK */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "sync"))
		hang_in_sync();
	else if (argc == 2 && !strcmp(argv[1], "tree"))
		hang_with_tree();
	else if (argc == 2 && !strcmp(argv[1], "queue"))
		hang_with_queue();
	else if (argc == 3 && !strcmp(argv[1], "chain") && atol(argv[2]) > 0)
		hang_in_chain(atol(argv[2]));
	fprintf(stderr, "usage: ps_hang sync|tree|queue|chain N\n");
	return 2;
}
