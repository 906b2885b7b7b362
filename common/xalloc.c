#include "xalloc.h"

#include "mem_limit.h"

#include <stdio.h>
#include <stdlib.h>

void xalloc_oom(void)
{
	/* Under the tool's memory limit, the input asked too much: a clear error, exit 2. */
	if (mem_limit_bytes())
		mem_limit_exceeded();
	fputs("closuretrace: out of memory\n", stderr);
	abort();
}

static void *checked(void *p)
{
	if (!p)
		xalloc_oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	return checked(calloc(n, size));
}

void *xrealloc(void *p, size_t size)
{
	return checked(realloc(p, size));
}
