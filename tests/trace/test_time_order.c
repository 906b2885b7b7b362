/*
 * trace/time_order.c, the one place records are put back in time order: items of several sources,
 * each mostly in order with some late ones, leave in (time, order) order whatever the sources
 * and the lateness; equal times leave by order; items keep their payload; signed times (the
 * model's, which may be negative) keep their order through time_key_signed; the room follows
 * what is held (a burst over thousands of sources is given back as it leaves).
 */
#include "check.h"
#include "time_order.h"

struct item {
	struct time_key key;
	uint32_t source;
	uint64_t payload;
};

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Whether f may leave after the item (ts, order) that left before it. */
static bool after(const struct item *f, bool any, uint64_t ts, uint64_t order)
{
	return !any || f->key.ts > ts || (f->key.ts == ts && f->key.order > order);
}

/*
 * Pushes n items over sources sources as a clock runs; one in late_every is 50 ticks late, earlier
 * than its source's latest. Items leave once the clock is lag ticks past them (as the recorder
 * releases below its horizon): each must not be earlier than the one before it.
 */
static void run(uint32_t sources, size_t n, unsigned late_every, uint64_t lag)
{
	struct time_order m;
	uint64_t clock = 100, last_ts = 0, last_order = 0, popped = 0;
	const struct item *f;
	bool any = false;

	time_order_init(&m, sizeof(struct item));
	for (uint32_t s = 0; s < sources; s++)
		EXPECT(time_order_source(&m) == (int64_t)s, "source %u", s);
	for (size_t i = 0; i < n; i++) {
		uint32_t s = (uint32_t)(next_random() % sources);
		struct item it = {.key = {.ts = clock, .order = i}, .source = s};

		clock += next_random() % 3; /* equal times happen */
		if (late_every && next_random() % late_every == 0)
			it.key.ts -= 50;
		it.payload = it.key.ts * 31 + s;
		EXPECT(time_order_push(&m, s, &it), "push %zu", i);
		for (; (f = time_order_first(&m)) && f->key.ts + lag <= clock; popped++) {
			EXPECT(after(f, any, last_ts, last_order),
			       "out of order: %" PRIu64 "/%" PRIu64 " after %" PRIu64 "/%" PRIu64,
			       f->key.ts, f->key.order, last_ts, last_order);
			EXPECT(f->payload == f->key.ts * 31 + f->source, "payload of %" PRIu64,
			       f->key.order);
			last_ts = f->key.ts, last_order = f->key.order, any = true;
			time_order_pop(&m);
		}
	}
	/* What is left leaves in order too, then nothing. */
	for (; (f = time_order_first(&m)); time_order_pop(&m), popped++) {
		EXPECT(after(f, any, last_ts, last_order),
		       "out of order at the end: %" PRIu64 " after %" PRIu64, f->key.ts, last_ts);
		last_ts = f->key.ts, last_order = f->key.order, any = true;
	}
	EXPECT(popped == n, "%" PRIu64 " of %zu items left", popped, n);
	EXPECT(m.held == 0, "%zu still held", m.held);
	time_order_free(&m);
}

/* Items pushed all at once, fully out of order, come out sorted (the late heap alone). */
static void reversed(void)
{
	struct time_order m;

	time_order_init(&m, sizeof(struct item));
	EXPECT(time_order_source(&m) == 0, "one source");
	for (uint64_t i = 0; i < 3000; i++)
		EXPECT(time_order_push(&m, 0, &(struct item){.key = {3000 - i, i}}), "push");
	for (uint64_t t = 1; t <= 3000; t++, time_order_pop(&m)) {
		const struct item *f = time_order_first(&m);

		EXPECT(f && f->key.ts == t, "reversed: %" PRIu64 " where %" PRIu64 " was due",
		       f ? f->key.ts : 0, t);
	}
	EXPECT(!time_order_first(&m), "empty at the end");
	time_order_free(&m);
}

/*
 * A burst over many sources, every ring grown, then drained to a few items each and then to none:
 * the room (bytes) follows. 4,000 sources of 200 items: each ring at 256 items (16, doubled);
 * with a quarter of the items left, at most half the room; with none left, each
 * source's smallest ring.
 */
static void room_follows(void)
{
	struct time_order m;
	const uint32_t sources = 4000, per = 200;
	size_t peak;

	time_order_init(&m, sizeof(struct item));
	for (uint32_t s = 0; s < sources; s++)
		EXPECT(time_order_source(&m) == s, "source %u", s);
	for (uint32_t i = 0; i < per; i++)
		for (uint32_t s = 0; s < sources; s++)
			EXPECT(time_order_push(
				       &m, s,
				       &(struct item){.key = {i, (uint64_t)i * sources + s}}),
			       "push");
	peak = m.bytes;
	EXPECT(peak == (size_t)sources * 256 * sizeof(struct item), "the burst's room: %zu", peak);
	for (uint32_t n = sources * per; n > sources * 50; n--)
		time_order_pop(&m);
	EXPECT(m.held == (size_t)sources * 50 && m.bytes <= peak / 2,
	       "a quarter held, %zu of %zu bytes of room", m.bytes, peak);
	while (time_order_first(&m))
		time_order_pop(&m);
	/* A ring at its smallest stays: a source that holds one item at a time allocates once. */
	EXPECT(m.bytes == (size_t)sources * 16 * sizeof(struct item),
	       "nothing held, %zu bytes of room kept (the smallest rings)", m.bytes);
	time_order_free(&m);
}

static void signed_times(void)
{
	EXPECT(time_key_signed(-5) < time_key_signed(-1), "-5 before -1");
	EXPECT(time_key_signed(-1) < time_key_signed(0), "-1 before 0");
	EXPECT(time_key_signed(0) < time_key_signed(7), "0 before 7");
	EXPECT(time_key_signed(INT64_MIN) < time_key_signed(INT64_MAX), "the extremes");
}

int main(void)
{
	run(1, 20000, 0, 0);		  /* in order, each leaving at once */
	run(1, 20000, 7, 60);		  /* the model's window: one source, late lines */
	run(16, 100000, 0, 60);		  /* the recorder: thread buffers, each in order */
	run(64, 100000, 13, 60);	  /* ... with late records (a poll read ahead) */
	run(8, 50000, 5, UINT64_MAX / 2); /* all held, then all leave */
	reversed();
	room_follows();
	signed_times();
	if (check_failures)
		return 1;
	puts("ok: items of 1 to 64 sources leave in time order, ties by order, payloads whole");
	return 0;
}
