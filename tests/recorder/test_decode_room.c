/*
 * The batch decoder past its room (BATCH_HELD_BYTES): the oldest events leave early, and a
 * record that comes after them and is older is lost, counted, never written out of time order
 * (batch_behind_order failed so under load: "event N is earlier than the one before it").
 */
#include <stdio.h>
#include <stdlib.h>

#include "batch_decode.h"

static uint64_t emitted, last_ts, out_of_order;

static void emit(void *ctx, const struct ct_event *e, uint32_t pid)
{
	(void)ctx;
	(void)pid;
	if (e->ts < last_ts)
		out_of_order++;
	last_ts = e->ts;
	emitted++;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "test_decode_room: " __VA_ARGS__);                                 \
		exit(1);                                                                           \
	} while (0)

int main(void)
{
	struct batch_decoder *d = batch_decoder_new(1, emit, NULL);
	struct closure_batch_record old = {.ts = 500, .cl = 0x1000, .count = 1, .seq = 1, .op = 0};
	uint64_t n = 0;

	if (!d)
		FAIL("out of memory\n");
	/* No frontier ever comes: every event is held until the room is full. */
	while (!batch_decoder_early(d)) {
		struct ct_event e = {.ts = 1000 + n++, .cl = 0x2000};

		if (!batch_decoder_inject(d, &e, 7))
			FAIL("inject %llu refused\n", (unsigned long long)n);
		if (n > 100000000)
			FAIL("nothing left early after %llu events\n", (unsigned long long)n);
	}
	if (emitted != batch_decoder_early(d))
		FAIL("%llu emitted, %llu early\n", (unsigned long long)emitted,
		     (unsigned long long)batch_decoder_early(d));
	/* A thread's record stamped before those that left: lost, not written behind them. */
	if (batch_decoder_feed(d, 7, 8, batch_stream_key(1, 0), &old, 1) != 1)
		FAIL("the old record was not taken\n");
	if (batch_decoder_late(d) != 1)
		FAIL("late %llu, want 1\n", (unsigned long long)batch_decoder_late(d));
	batch_decoder_flush(d);
	if (out_of_order)
		FAIL("%llu events out of time order\n", (unsigned long long)out_of_order);
	if (emitted != n)
		FAIL("%llu emitted of %llu injected\n", (unsigned long long)emitted,
		     (unsigned long long)n);
	printf("ok: %llu held before the first left early; the older record lost (late 1)\n",
	       (unsigned long long)(n - 1));
	batch_decoder_free(d);
	return 0;
}
