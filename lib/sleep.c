/* Sleeping on a word and waking its sleepers (closure_sync()'s futex, internal.h), and the clock. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "internal.h"

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

/* Sleeps while *word is val, until until_ns on CLOCK_MONOTONIC (0: no limit); 0 or an errno. */
static int futex_wait_until(uint32_t *word, uint32_t val, uint64_t until_ns)
{
	struct timespec until = {(time_t)(until_ns / 1000000000u), (long)(until_ns % 1000000000u)};

	if (!until_ns)
		return futex(word, FUTEX_WAIT, val, NULL) ? errno : 0;
	/* FUTEX_WAIT_BITSET: an absolute time on CLOCK_MONOTONIC. */
	return syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, &until, NULL,
		       FUTEX_BITSET_MATCH_ANY)
		       ? errno
		       : 0;
}

/*
 * While batching, the sleep first lasts only until this thread's records are due (lib/batch.h):
 * still asleep then, it hands them over and sleeps on.
 */
int closure_sleep_on(uint32_t *word, uint32_t val, uint64_t until_ns)
{
	for (;;) {
		uint64_t due = CLOSURE_BATCH_ON() ? closure_batch_due() : 0;
		bool for_batch = due && (!until_ns || due < until_ns);

		if (futex_wait_until(word, val, for_batch ? due : until_ns) != ETIMEDOUT)
			return 0; /* woken, *word changed, or a signal */
		if (!for_batch)
			return ETIMEDOUT;
		closure_batch_flush(); /* blocked past the records' due time: hand them over */
	}
}

void closure_futex_wake(uint32_t *word)
{
	futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

long closure_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
