/*
 * A service for `closuretrace top`'s suspect test: every millisecond a closure is initialised at
 * one site (L_INIT) and finished a moment later. After SIGUSR1, the next one keeps a reference
 * forever (L_LEAK) and "leaked" is printed. Runs until killed.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include <closure.h>

static volatile sig_atomic_t leak_next;

static void on_usr1(int sig)
{
	(void)sig;
	leak_next = 1;
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

int main(void)
{
	static struct closure leaked;
	struct closure cl;
	bool done = false;

	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		bool leak = leak_next && !done;
		struct closure *c = leak ? &leaked : &cl;

		closure_init(c, NULL); /* L_INIT */
		if (leak) {
			closure_get(c); /* L_LEAK: never put */
			done = true;
			printf("leaked\n");
			fflush(stdout);
		}
		closure_return(c);
		nap_ms(1);
	}
}
