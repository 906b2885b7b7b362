/*
 * ct_tree: a correct program that reuses addresses fast, for `check` under load (issue 25 item 2).
 *
 *   ct_tree FANOUT DEPTH ROUNDS ITEMS
 *
 * A tree of processes (FANOUT children each, DEPTH levels below the root: 6 and 3 make 259), each
 * with a 4-thread workqueue. Each process runs ROUNDS rounds: a stack closure (the same address
 * every round) parents ITEMS heap closures (malloc hands the same addresses back round after
 * round); each item continues on the workqueue, holds a reference on its neighbour (taken by main)
 * and puts it back from a worker thread, then returns with a destructor that frees
 * it; main waits in closure_sync. No closure leaks: `check` must exit 0.
 */
#include <closure.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct item {
	struct closure cl;
	struct item *peer; /* holds a reference on it between step_a and step_b */
};

static struct workqueue *wq;

static void item_free(struct closure *cl)
{
	free(container_of(cl, struct item, cl));
}

static void step_b(struct closure *cl)
{
	struct item *it = container_of(cl, struct item, cl);

	if (it->peer)
		closure_put(&it->peer->cl);
	closure_return_with_destructor(cl, item_free);
}

static void step_a(struct closure *cl)
{
	struct item *it = container_of(cl, struct item, cl);

	(void)it;
	closure_get(cl);
	closure_put(cl);
	continue_at(cl, step_b, wq);
}

static void round_of(unsigned items)
{
	struct closure top;
	struct item **v = calloc(items, sizeof(*v));

	closure_init_stack(&top);
	for (unsigned i = 0; i < items; i++) {
		v[i] = calloc(1, sizeof(*v[i]));
		closure_init(&v[i]->cl, &top);
	}
	/* Each item's peer is the next one, alive until the item has put its reference back. */
	for (unsigned i = 0; i + 1 < items; i++) {
		v[i]->peer = v[i + 1];
		closure_get(&v[i + 1]->cl);
	}
	for (unsigned i = 0; i < items; i++)
		continue_at(&v[i]->cl, step_a, wq);
	free(v);
	closure_sync(&top);
}

static void run(unsigned rounds, unsigned items)
{
	wq = workqueue_create("ct_tree", 4);
	for (unsigned r = 0; r < rounds; r++)
		round_of(items);
	workqueue_destroy(wq);
}

int main(int argc, char **argv)
{
	unsigned fanout, depth, rounds, items, level = 0;
	int failed = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: ct_tree FANOUT DEPTH ROUNDS ITEMS\n");
		return 2;
	}
	fanout = (unsigned)atoi(argv[1]);
	depth = (unsigned)atoi(argv[2]);
	rounds = (unsigned)atoi(argv[3]);
	items = (unsigned)atoi(argv[4]);
	/* Forks before any thread: each process below makes its own workqueue. */
	for (unsigned c = 0; level < depth && c < fanout; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			level++;
			c = (unsigned)-1; /* the child forks its own children */
		}
	}
	run(rounds, items);
	for (int st; wait(&st) > 0;)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st);
	return failed;
}
