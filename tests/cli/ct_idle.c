/*
 * record_test.sh idle_suspects (issue 35 item 4): a program that did its work and sits idle
 * with 7 closures that will never finish, all made at one site (IDLE) where no closure ever
 * finished, and 100 finished at another (DONE). Linked with libclosure built without
 * CLOSURE_DEBUG, as installed: a recorder attached after "ready" reads them from the registry.
 * Prints "ready", then waits to be killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <closure.h>

int main(void)
{
	struct closure *idle = calloc(7, sizeof(*idle));

	if (!idle)
		return 1;
	for (int i = 0; i < 100; i++) {
		struct closure cl;

		closure_init(&cl, NULL); /* DONE */
		closure_return(&cl);
	}
	for (int i = 0; i < 7; i++)
		closure_init(&idle[i], NULL); /* IDLE */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
