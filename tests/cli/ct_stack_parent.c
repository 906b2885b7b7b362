/*
 * record_test.sh snapshot_stack_parent: a closure alive at attach whose parent is a stack closure
 * that is not in the live list (listed only while it sleeps in closure_sync). Before "ready" it
 * makes a stack closure (TOP) and a child of it on the heap (CHILD); after "go" on standard input
 * the child returns, putting its parent's reference, and the parent syncs, then 100 short
 * closures come and go and the program exits. A recorder attached between sees neither init:
 * both must be in its snapshot, or the parent's events have no init in the trace.
 */
#include <stdio.h>
#include <stdlib.h>

#include <closure.h>

int main(void)
{
	struct closure top, *child = malloc(sizeof(*child));
	char line[16];

	closure_init_stack(&top);  /* TOP */
	closure_init(child, &top); /* CHILD */
	printf("ready %p %p\n", (void *)&top, (void *)child);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	closure_return(child);
	closure_sync(&top);
	free(child);
	for (int i = 0; i < 100; i++) {
		struct closure cl;

		closure_init(&cl, NULL);
		closure_return(&cl);
	}
	return 0;
}
