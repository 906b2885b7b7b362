/*
 * Concurrency stress: several threads each build random closure trees under a stack root and
 * sync on it. Nodes hand references to helper threads (closure_put, closure_sub), wait on shared
 * waitlists that helpers wake, sometimes closure_sync or closure_sync_timeout on themselves,
 * start children inline or on workqueues, and continue on a workqueue or inline for a few
 * rounds before they finish, with a destructor or with closure_return. A dumper thread lists the
 * live closures all along. At the end every node must have run each step once and finished once,
 * every root's sync must have returned, and nothing may be left alive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <closure.h>

#include "check.h"

enum {
	STRESS_THREADS = 3,
	ROUNDS = 600,	/* trees per stress thread */
	MAX_NODES = 40, /* per tree */
	MAX_DEPTH = 3,
	HELPERS = 3,
	LISTS = 4,
};

/* ---- helpers: threads that put references and wake waitlists for the nodes ---- */

enum task_kind { TASK_PUT, TASK_SUB, TASK_WAKE };

struct task {
	enum task_kind kind;
	struct closure *cl;
	int n;
	struct closure_waitlist *list;
	struct task *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct task *head, *tail;
	bool stop;
} tasks = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, false};

static struct closure_waitlist lists[LISTS];
static struct workqueue *wq_a, *wq_b;

static void add_task(enum task_kind kind, struct closure *cl, int n, struct closure_waitlist *list)
{
	struct task *t = malloc(sizeof(*t));

	CHECK(t);
	*t = (struct task){kind, cl, n, list, NULL};
	pthread_mutex_lock(&tasks.lock);
	if (tasks.tail)
		tasks.tail->next = t;
	else
		tasks.head = t;
	tasks.tail = t;
	pthread_cond_signal(&tasks.more);
	pthread_mutex_unlock(&tasks.lock);
}

/* Helpers never block on a closure, so whatever waits for them makes progress. */
static void *helper(void *arg)
{
	struct task *t;

	(void)arg;
	pthread_mutex_lock(&tasks.lock);
	for (;;) {
		while (!tasks.head && !tasks.stop)
			pthread_cond_wait(&tasks.more, &tasks.lock);
		t = tasks.head;
		if (!t)
			break;
		tasks.head = t->next;
		if (!tasks.head)
			tasks.tail = NULL;
		pthread_mutex_unlock(&tasks.lock);
		switch (t->kind) {
		case TASK_PUT:
			closure_put(t->cl);
			break;
		case TASK_SUB:
			closure_sub(t->cl, t->n);
			break;
		case TASK_WAKE:
			closure_wake_up(t->list);
			break;
		}
		free(t);
		pthread_mutex_lock(&tasks.lock);
	}
	pthread_mutex_unlock(&tasks.lock);
	return NULL;
}

/* ---- the trees ---- */

struct tree {
	struct closure root; /* on the stress thread's stack frame, via the tree */
	struct node *nodes;
	int used; /* atomic: nodes handed out */
};

struct node {
	struct closure cl;
	struct tree *tree;
	struct node *parent; /* NULL under the root */
	int depth;
	uint32_t rng;
	int rounds;	      /* continuations after the first step */
	int steps;	      /* steps run; atomic only for the final check's sake */
	bool with_destructor; /* else closure_return */
	int finished;	      /* atomic: destructor runs */
};

static uint32_t next_random(uint32_t *state)
{
	/* xorshift32: each node's steps run one at a time, so its state needs no lock */
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static struct workqueue *pick_wq(uint32_t *rng, bool inline_ok)
{
	switch (next_random(rng) % (inline_ok ? 3 : 2)) {
	case 0:
		return wq_a;
	case 1:
		return wq_b;
	default:
		return NULL;
	}
}

/* Hand out references and waitlist slots that helpers give back later. */
static void hand_out_refs(struct closure *cl, uint32_t *rng)
{
	int i, n;

	for (i = next_random(rng) % 3; i > 0; i--) {
		closure_get(cl);
		add_task(TASK_PUT, cl, 1, NULL);
	}
	n = next_random(rng) % 4;
	if (n) {
		for (i = 0; i < n; i++)
			closure_get(cl);
		add_task(TASK_SUB, cl, n, NULL);
	}
	if (next_random(rng) % 2) {
		CHECK(closure_get_not_zero(cl));
		add_task(TASK_PUT, cl, 1, NULL);
	}
	if (next_random(rng) % 3 == 0) {
		struct closure_waitlist *list = &lists[next_random(rng) % LISTS];

		/* A helper may wake the list between the two calls: then the second waits anew. */
		if (closure_wait(list, cl))
			add_task(TASK_WAKE, NULL, 0, list);
		if (closure_wait(list, cl))
			add_task(TASK_WAKE, NULL, 0, list);
	}
}

static void check_owned_alone(struct closure *cl)
{
	CHECK_EQ(closure_nr_remaining(cl), 1);
	CHECK_EQ(closure_flags(cl), CLOSURE_RUNNING);
}

static void node_destructor(struct closure *cl)
{
	struct node *n = container_of(cl, struct node, cl);

	CHECK_EQ(__atomic_fetch_add(&n->finished, 1, __ATOMIC_RELAXED), 0);
	CHECK_EQ(closure_nr_remaining(cl), 0);
	/* Our reference on the parent is still held: it cannot have finished. */
	if (n->parent)
		CHECK_EQ(__atomic_load_n(&n->parent->finished, __ATOMIC_RELAXED), 0);
	CHECK(closure_nr_remaining(n->parent ? &n->parent->cl : &n->tree->root) >= 1);
}

static void node_step(struct closure *cl)
{
	struct node *n = container_of(cl, struct node, cl);

	check_owned_alone(cl);
	n->steps++;
	if (n->steps <= n->rounds) {
		hand_out_refs(cl, &n->rng);
		continue_at(cl, node_step, pick_wq(&n->rng, true));
		return;
	}
	if (n->with_destructor)
		closure_return_with_destructor(cl, node_destructor);
	else
		closure_return(cl);
}

static struct node *new_node(struct tree *t, struct node *parent, uint32_t seed)
{
	int i = __atomic_fetch_add(&t->used, 1, __ATOMIC_RELAXED);
	struct node *n;

	if (i >= MAX_NODES)
		return NULL;
	n = &t->nodes[i];
	n->tree = t;
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 0;
	n->rng = seed | 1;
	n->rounds = next_random(&n->rng) % 3;
	n->with_destructor = next_random(&n->rng) % 3;
	return n;
}

static void node_begin(struct node *n);

static void node_main(struct closure *cl)
{
	node_begin(container_of(cl, struct node, cl));
}

static void start_child(struct closure *parent_cl, struct node *parent, struct tree *t,
			uint32_t *rng)
{
	struct node *c = new_node(t, parent, next_random(rng));

	if (!c)
		return;
	if (next_random(rng) % 2) {
		closure_call(&c->cl, node_main, pick_wq(rng, false), parent_cl);
	} else {
		closure_init(&c->cl, parent_cl);
		node_begin(c);
	}
}

/*
 * The first step, run by a stress thread or a workqueue worker (never by a helper, since it
 * may block in closure_sync).
 */
static void node_begin(struct node *n)
{
	struct closure *cl = &n->cl;
	int i;

	check_owned_alone(cl);
	n->steps = 0;
	hand_out_refs(cl, &n->rng);
	switch (next_random(&n->rng) % 4) {
	case 0:
		closure_sync(cl);
		check_owned_alone(cl);
		break;
	case 1:
		while (closure_sync_timeout(cl, 1) == -ETIME) /* ours again; maybe still waiting */
			CHECK_EQ(closure_flags(cl) & ~CLOSURE_WAITING, CLOSURE_RUNNING);
		check_owned_alone(cl);
		break;
	}
	if (n->depth < MAX_DEPTH)
		for (i = next_random(&n->rng) % 4; i > 0; i--)
			start_child(cl, n, n->tree, &n->rng);
	continue_at(cl, node_step, pick_wq(&n->rng, true));
}

static int trees_built, nodes_built;

static void build_and_sync_tree(uint32_t seed)
{
	struct tree t = {.nodes = calloc(MAX_NODES, sizeof(struct node))};
	uint32_t rng = seed | 1;
	int i, used;

	CHECK(t.nodes);
	closure_init_stack(&t.root);
	for (i = 1 + next_random(&rng) % 4; i > 0; i--)
		start_child(&t.root, NULL, &t, &rng);
	hand_out_refs(&t.root, &rng);
	if (next_random(&rng) % 2)
		closure_sync(&t.root);
	else
		while (closure_sync_timeout(&t.root, 2) == -ETIME)
			;
	check_owned_alone(&t.root);

	used = __atomic_load_n(&t.used, __ATOMIC_RELAXED);
	if (used > MAX_NODES)
		used = MAX_NODES;
	for (i = 0; i < used; i++) {
		struct node *n = &t.nodes[i];

		CHECK_EQ(n->steps, n->rounds + 1);
		CHECK_EQ(closure_nr_remaining(&n->cl), 0);
		CHECK_EQ(__atomic_load_n(&n->finished, __ATOMIC_RELAXED), n->with_destructor);
	}
	__atomic_add_fetch(&nodes_built, used, __ATOMIC_RELAXED);
	__atomic_add_fetch(&trees_built, 1, __ATOMIC_RELAXED);
	free(t.nodes);
}

static void *stress_thread(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u;
	int round;

	for (round = 0; round < ROUNDS; round++)
		build_and_sync_tree(seed + round * 40503u);
	return NULL;
}

static int dumping; /* atomic: the dumper runs while set */

static void *dumper(void *arg)
{
	FILE *null = fopen("/dev/null", "w");
	struct timespec ms1 = {0, 1000000L};

	(void)arg;
	CHECK(null);
	while (__atomic_load_n(&dumping, __ATOMIC_RELAXED)) {
		closure_debug_dump(null);
		nanosleep(&ms1, NULL); /* a dump reads every slot: leave the others the CPU */
	}
	fclose(null);
	return NULL;
}

int main(void)
{
	pthread_t stress[STRESS_THREADS], helpers[HELPERS], dump_thread;
	int i;

	wq_a = workqueue_create("stress-a", 2);
	wq_b = workqueue_create("stress-b", 1);
	CHECK(wq_a && wq_b);
	for (i = 0; i < HELPERS; i++)
		CHECK_EQ(pthread_create(&helpers[i], NULL, helper, NULL), 0);
	__atomic_store_n(&dumping, 1, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_create(&dump_thread, NULL, dumper, NULL), 0);
	for (i = 0; i < STRESS_THREADS; i++)
		CHECK_EQ(
			pthread_create(&stress[i], NULL, stress_thread, (void *)(uintptr_t)(i + 1)),
			0);
	for (i = 0; i < STRESS_THREADS; i++)
		CHECK_EQ(pthread_join(stress[i], NULL), 0);
	__atomic_store_n(&dumping, 0, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_join(dump_thread, NULL), 0);

	pthread_mutex_lock(&tasks.lock);
	tasks.stop = true; /* helpers leave once the queue is empty */
	pthread_cond_broadcast(&tasks.more);
	pthread_mutex_unlock(&tasks.lock);
	for (i = 0; i < HELPERS; i++)
		CHECK_EQ(pthread_join(helpers[i], NULL), 0);
	workqueue_destroy(wq_a);
	workqueue_destroy(wq_b);
	for (i = 0; i < LISTS; i++)
		CHECK_PTR_EQ(lists[i].list.first, NULL);

	CHECK_EQ(trees_built, STRESS_THREADS * ROUNDS);
	CHECK(nodes_built >= trees_built); /* every tree has at least one node */
	CHECK_EQ(closure_debug_dump(stderr), 0); /* the registry keeps nothing that finished */
	printf("test_stress: ok: %d trees, %d nodes\n", trees_built, nodes_built);
	return 0;
}
