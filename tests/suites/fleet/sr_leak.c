/*
 * The program source_root_test.sh builds in two checkouts: four requests of one kind under one
 * parent, the last of which takes one reference too many (LEAK). Marker comments name the lines
 * the test expects.
 */
#include <stdlib.h>

#include <closure.h>

#define REQUESTS 4

/* The leaked closure stays reachable from here, so that LeakSanitizer does not count it. */
static struct closure *kept[REQUESTS + 1];

static void request(struct closure *parent, unsigned i)
{
	struct closure *cl = malloc(sizeof(*cl));

	closure_init(cl, parent); /* INIT */
	closure_get(cl);
	if (i == REQUESTS - 1)
		closure_get(cl); /* LEAK */
	closure_put(cl);
	closure_return(cl);
	kept[i] = cl;
}

int main(void)
{
	struct closure *parent = malloc(sizeof(*parent));

	closure_init(parent, NULL); /* PARENT */
	for (unsigned i = 0; i < REQUESTS; i++)
		request(parent, i);
	closure_return(parent);
	kept[REQUESTS] = parent;
	return 0;
}
