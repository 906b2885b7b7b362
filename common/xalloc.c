#include "xalloc.h"

#include "mem_limit.h"

#include <stdio.h>
#include <stdlib.h>

void viz_oom(void)
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
		viz_oom();
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
