/* The scratch build's program (add_probe.sh): two closures poked by the probe the test adds
 * (closure_poke, which exists only in that build). The first ends; the second keeps a reference
 * nobody puts back, a leak for explain to tell. Not built by the project itself. */
#include <closure.h>
#include <stdlib.h>

int main(void)
{
	struct closure *ok = calloc(1, sizeof(*ok)), *leak = calloc(1, sizeof(*leak));

	closure_init(ok, NULL);
	closure_get(ok);
	closure_poke(ok, 7);
	closure_put(ok);
	closure_return(ok);

	closure_init(leak, NULL);
	closure_get(leak); /* never put back */
	closure_poke(leak, 11);
	closure_return(leak);
	return 0;
}
