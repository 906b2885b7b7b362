/* The live registry's slow paths: chunks, threads that come and go. See registry.h. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "closure_debug.h"
#include "internal.h"
#include "registry.h"

__thread struct registry_log registry_log __attribute__((tls_model("initial-exec")));
struct registry_chunk *closure_registry;

/* The rings of threads that exited, each whole, for new threads to take (under orphans_lock). */
static struct registry_chunk *orphans[64];
static unsigned n_orphans;
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A pass over the ring that took fewer than this share of its slots adds a chunk (1/4): the
 * slots looked at per slot taken stay about 4, whatever the closures alive. */
#define PASS_MIN_TAKEN(chunks) ((chunks) * (REGISTRY_SLOTS / 4))

static void at_thread_exit(void *arg)
{
	struct registry_log *log = arg;

	pthread_mutex_lock(&orphans_lock);
	if (n_orphans < sizeof(orphans) / sizeof(orphans[0]))
		orphans[n_orphans++] = log->first;
	/* else the ring stays as it is: its closures are still found, its slots never reused */
	pthread_mutex_unlock(&orphans_lock);
	log->cur = log->first = NULL;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, at_thread_exit);
}

/* The child of a fork is one thread: its own id, and the parent's other threads' rings stay
 * where they were (their closures, copied, are still found). */
static void after_fork_child(void)
{
	registry_log.tid = (uint32_t)gettid();
}

static void make_fork_handler(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static struct registry_chunk *new_chunk(void)
{
	struct registry_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = CLOSURE_REGISTRY_MAGIC;
	c->next = __atomic_load_n(&closure_registry, __ATOMIC_RELAXED);
	/* Release: a reader that finds c finds it whole. */
	while (!__atomic_compare_exchange_n(&closure_registry, &c->next, c, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return c;
}

/* A thread's first closure: a ring left by a thread that exited, or a new chunk. */
static bool start_log(struct registry_log *log)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	struct registry_chunk *ring = NULL;

	pthread_once(&fork_once, make_fork_handler);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_mutex_lock(&orphans_lock);
	if (n_orphans)
		ring = orphans[--n_orphans];
	pthread_mutex_unlock(&orphans_lock);
	if (!ring && (ring = new_chunk()))
		ring->next_own = ring;
	if (!ring)
		return false;
	log->first = log->cur = ring;
	log->chunks = 1;
	for (struct registry_chunk *c = ring->next_own; c != ring; c = c->next_own)
		log->chunks++;
	log->cursor = 0;
	log->taken = 0;
	log->visited = 0;
	log->tid = (uint32_t)gettid();
	pthread_setspecific(exit_key, log);
	return true;
}

/* A pass over the ring ended having taken too few: a new chunk after cur, looked at next. */
static bool grow(struct registry_log *log)
{
	struct registry_chunk *c = new_chunk();

	if (!c)
		return false;
	c->next_own = log->cur->next_own;
	log->cur->next_own = c;
	log->chunks++;
	return true;
}

struct closure **registry_slot_slow(struct registry_log *log)
{
	if (!log->cur && !start_log(log))
		return NULL;
	for (;;) {
		while (log->cursor < REGISTRY_SLOTS) {
			struct closure **slot = &log->cur->slot[log->cursor++];

			if (!__atomic_load_n(slot, __ATOMIC_RELAXED)) {
				log->taken++;
				return slot;
			}
		}
		/* A chunk looked through: a pass ends once every chunk of the ring was. */
		if (++log->visited >= log->chunks) {
			if (log->taken < PASS_MIN_TAKEN(log->chunks) && !grow(log))
				return NULL;
			log->visited = 0;
			log->taken = 0;
		}
		log->cur = log->cur->next_own;
		log->cursor = 0;
	}
}

uint32_t registry_tid(void)
{
	if (!registry_log.tid)
		registry_log.tid = (uint32_t)gettid();
	return registry_log.tid;
}

bool registry_holds(struct closure *cl)
{
	struct closure **slot = cl->registry_slot;

	for (struct registry_chunk *c = __atomic_load_n(&closure_registry, __ATOMIC_ACQUIRE); c;
	     c = c->next)
		if (slot >= c->slot && slot < c->slot + REGISTRY_SLOTS)
			return __atomic_load_n(slot, __ATOMIC_RELAXED) == cl;
	return false;
}
