/*
 * Breaks one rule of libclosure on purpose, for tests that record the bug probe (record_bugs.sh):
 *
 *   bug_workload list      the trace names of every bug code of the contract (closure_probes.h)
 *                          that this build fires (init_live: only with CLOSURE_DEBUG)
 *   bug_workload NAME      breaks the rule NAME names: the library prints its line and aborts
 *   bug_workload destroy   closure_debug_destroy of a live closure, then exits 0
 *
 * Every rule of the contract must have a trigger here: a name without one exits 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <closure.h>
#include <closure_probes.h>

static struct closure victim, blocker;

static void never_runs(struct closure *cl)
{
	(void)cl;
}

static void block_forever(struct closure *cl)
{
	(void)cl;
	for (;;)
		pause();
}

static void trigger(int code)
{
	struct workqueue *wq;

	switch (code) {
	case 1: /* underflow */
		closure_init(&victim, NULL);
		closure_return(&victim);
		closure_put(&victim);
		break;
	case 2: /* bad_flags */
		closure_init(&victim, NULL);
		closure_put(&victim);
		break;
	case 4: /* not_running */
		closure_init(&victim, NULL);
		closure_get(&victim);
		continue_at(&victim, never_runs, NULL);
		continue_at(&victim, never_runs, NULL);
		break;
	case 5: /* get_finished */
		closure_init(&victim, NULL);
		closure_return(&victim);
		closure_get(&victim);
		break;
	case 6: /* not_alive */
		closure_init(&victim, NULL);
		closure_return(&victim);
		closure_debug_destroy(&victim);
		break;
	case 7: /* queued_twice: the only worker is busy, so the first queueing stays pending */
		wq = workqueue_create("bug", 1);
		closure_init(&blocker, NULL);
		continue_at_nobarrier(&blocker, block_forever, wq);
		closure_init(&victim, NULL);
		closure_get(&victim);
		continue_at_nobarrier(&victim, never_runs, wq);
		continue_at_nobarrier(&victim, never_runs, wq);
		break;
	case 8: /* init_live (CLOSURE_DEBUG builds only) */
		closure_init(&victim, NULL);
		closure_init(&victim, NULL);
		break;
	case 9: /* own_parent */
		closure_init(&victim, &victim);
		break;
	case 11: /* overflow: the count set at its limit by hand (8,388,607 gets), one get more */
		closure_init(&victim, NULL);
		__atomic_store_n(CLOSURE_WORD(&victim),
				 CLOSURE_RUNNING | ((CLOSURE_DESTRUCTOR >> 1) - 1),
				 __ATOMIC_RELAXED);
		closure_get(&victim);
		break;
	case 10: /* no_executor: a program workqueue, and this program has no queue_work() */
		closure_init(&victim, NULL);
		continue_at_nobarrier(&victim, never_runs, (struct workqueue_struct *)&blocker);
		break;
	case 12: /* dead_workqueue: continued on a workqueue after its workqueue_destroy() */
		wq = workqueue_create("bug", 1);
		workqueue_destroy(wq);
		closure_init(&victim, NULL);
		continue_at(&victim, never_runs, wq);
		break;
	}
}

int main(int argc, char **argv)
{
	static const struct {
		int code;
		const char *name;
	} bugs[] = {
#define BUG_ENTRY(NAME, code, trace_name, meaning) {code, trace_name},
		CLOSURE_BUG_LIST(BUG_ENTRY)
#undef BUG_ENTRY
	};
	size_t n = sizeof(bugs) / sizeof(bugs[0]);

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < n; i++)
			if (TEST_CLOSURE_DEBUG || strcmp(bugs[i].name, "init_live"))
				printf("%s\n", bugs[i].name); /* init_live: CLOSURE_DEBUG only */
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "destroy")) {
		closure_init(&victim, NULL);
		printf("victim %p\n", (void *)&victim);
		closure_debug_destroy(&victim); /* destroy mode */
		return 0;
	}
	for (size_t i = 0; argc == 2 && i < n; i++) {
		if (strcmp(argv[1], bugs[i].name))
			continue;
		printf("victim %p\n", (void *)&victim);
		fflush(stdout);
		trigger(bugs[i].code);
		fprintf(stderr, "bug_workload: no trigger for %s (code %d)\n", bugs[i].name,
			bugs[i].code);
		return 2;
	}
	fprintf(stderr, "usage: bug_workload list | destroy | BUG_NAME\n");
	return 2;
}
