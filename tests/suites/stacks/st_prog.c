/*
 * --stacks' test program: a closure whose reference is taken two calls below main and never
 * put back (a leak), built with -fno-omit-frame-pointer so that its stack can be walked.
 * The marker comments name the lines the test expects.
 */
#include <closure/closure.h>
#include <stdlib.h>

static struct closure cl;

__attribute__((noinline)) static void take_ref(struct closure *c)
{
	closure_get(c); /* GET */
}

__attribute__((noinline)) static void helper(struct closure *c)
{
	take_ref(c);			   /* HELPER */
	__asm__ volatile("" ::: "memory"); /* not a tail call: helper's frame stays */
}

int main(void)
{
	closure_init(&cl, NULL); /* INIT */
	helper(&cl);		 /* MAIN */
	closure_return(&cl);	 /* the running reference given up; the get's never put */
	return 0;
}
