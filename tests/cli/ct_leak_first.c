/*
 * record_test.sh snapshot: a program that leaks a closure, then runs on. Before "ready" it makes
 * a closure it never finishes (LEAK) and one it finishes only after "go" on standard input
 * (EARLY); a recorder attached between the two sees neither init. After "go": EARLY finishes,
 * 100 short closures come and go, and the program exits.
 */
#include <stdio.h>
#include <stdlib.h>

#include <closure.h>

int main(void)
{
	struct closure *leaked = malloc(sizeof(*leaked)), *early = malloc(sizeof(*early));
	char line[16];

	closure_init(leaked, NULL); /* LEAK */
	closure_init(early, NULL);  /* EARLY */
	closure_get(early);
	printf("ready %p %p\n", (void *)leaked, (void *)early);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	closure_put(early);
	closure_return(early);
	for (int i = 0; i < 100; i++) {
		struct closure cl;

		closure_init(&cl, NULL);
		closure_return(&cl);
	}
	return 0;
}
