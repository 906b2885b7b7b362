/* A shared object that uses closures, loaded by ct_workload with dlopen after the recorder runs. */
#include <closure.h>

void plugin_run(long n);

void plugin_run(long n)
{
	struct closure stack;

	closure_init_stack(&stack); /* SITE plugin_init_stack */
	for (long i = 0; i < n; i++) {
		closure_get(&stack); /* SITE plugin_get */
		closure_put(&stack); /* SITE plugin_put */
	}
	closure_sync(&stack); /* SITE plugin_sync */
	__asm__ volatile("" ::: "memory");
}
