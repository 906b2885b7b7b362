#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>

static void *checked(void *p)
{
	if (!p) {
		fputs("closuretrace: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *viz_xcalloc(size_t n, size_t size)
{
	return checked(calloc(n, size));
}

void *viz_xrealloc(void *p, size_t size)
{
	return checked(realloc(p, size));
}
