/*
 * Writes a synthetic closuretrace trace for the viz benchmark, in the layout the recorder writes:
 * requests, each the parent of a few bios that take a reference and put it on completion. One
 * request in 1000 (--leak-every N; 0: none) loses a bio's put (a leak). Addresses come from a
 * small pool, so they are reused.
 *   viz_tracegen --events N [--fanout K] [--leak-every N] > trace.json     about N events
 *   viz_tracegen --closures N [--fanout K] [--leak-every N] > trace.json   about N closures
 *   viz_tracegen --chain N > trace.json   a parent chain N deep, none finished: N leaks, each
 *                                          with its chain to the root (report --json's worst case)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL 4096

static uint64_t ts, nevents, nclosures;
static uint64_t pool[POOL];
static unsigned pool_len;
static uint64_t next_addr = 0x7f0000100000;

static uint64_t addr_get(void)
{
	if (pool_len)
		return pool[--pool_len];
	next_addr += 0x100;
	return next_addr;
}

static void addr_put(uint64_t a)
{
	if (pool_len < POOL)
		pool[pool_len++] = a;
}

static void ev(const char *op, uint64_t cl, unsigned remaining, const char *flags, uint64_t ip,
	       const char *extra)
{
	ts += 37 + (nevents * 7919) % 113;
	nevents++;
	printf("{\"type\":\"event\",\"ts\":%" PRIu64 ",\"tid\":%u,\"ev\":\"%s\",\"cl\":\"0x%" PRIx64
	       "\",\"remaining\":%u%s%s%s,\"ip\":\"0x%" PRIx64 "\"%s}\n",
	       ts, 4243 + (unsigned)(nevents % 4), op, cl, remaining, *flags ? ",\"flags\":\"" : "",
	       flags, *flags ? "\"" : "", ip, extra);
}

static void request(unsigned fanout, bool leak)
{
	uint64_t req = addr_get(), bios[64];
	char extra[128];
	unsigned refs = 1;

	nclosures += 1 + fanout;
	ev("init", req, 1, "R", 0x401000, ",\"parent\":\"0x0\",\"stack\":false");
	for (unsigned i = 0; i < fanout; i++) {
		bios[i] = addr_get();
		ev("get", req, ++refs, "R", 0x401100, "");
		snprintf(extra, sizeof(extra), ",\"parent\":\"0x%" PRIx64 "\",\"stack\":false",
			 req);
		ev("init", bios[i], 1, "R", 0x401100, extra);
		ev("get", bios[i], 2, "R", 0x401110, "");
		ev("continue_at", bios[i], 1, "", 0x401120,
		   ",\"fn\":\"0x0\",\"wq\":\"0x0\",\"how\":\"return\"");
	}
	ev("continue_at", req, --refs, "", 0x401010,
	   ",\"fn\":\"0x402000\",\"wq\":\"0x7f00000a0000\",\"how\":\"continue_at\"");
	for (unsigned i = 0; i < fanout; i++) {
		if (leak && i == fanout - 1)
			return; /* the lost put: the bio and its request stay unfinished */
		ev("put", bios[i], 0, "", 0x401200, "");
		snprintf(extra, sizeof(extra), ",\"parent\":\"0x%" PRIx64 "\"", req);
		ev("finish", bios[i], 0, "", 0x401200, extra);
		addr_put(bios[i]);
		if (--refs == 0) {
			ev("run", req, 1, "R", 0x401200,
			   ",\"fn\":\"0x402000\",\"wq\":\"0x7f00000a0000\"");
			ev("continue_at", req, 0, "", 0x402010,
			   ",\"fn\":\"0x0\",\"wq\":\"0x0\",\"how\":\"return\"");
			ev("finish", req, 0, "", 0x402010, ",\"parent\":\"0x0\"");
			addr_put(req);
		} else {
			ev("put", req, refs, "", 0x401200, "");
		}
	}
}

/* A chain N deep: each closure the child of the one before, all still running at the end. */
static void chain(uint64_t n)
{
	for (uint64_t i = 1; i <= n; i++)
		printf("{\"type\":\"event\",\"ts\":%" PRIu64 ",\"tid\":4242,\"ev\":\"init\","
		       "\"cl\":\"0x%" PRIx64
		       "\",\"remaining\":1,\"flags\":\"R\",\"ip\":\"0x401000\","
		       "\"parent\":\"0x%" PRIx64 "\"}\n",
		       i, next_addr + 0x40 * i, i > 1 ? next_addr + 0x40 * (i - 1) : 0);
	nevents = ts = n;
}

int main(int argc, char **argv)
{
	uint64_t want_events = 0, want_closures = 0, want_chain = 0, n = 0;
	unsigned fanout = 8, leak_every = 1000;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--events"))
			want_events = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--closures"))
			want_closures = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--chain"))
			want_chain = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--leak-every"))
			leak_every = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--fanout"))
			fanout = (unsigned)strtoul(argv[i + 1], NULL, 10);
	}
	if ((!want_events && !want_closures && !want_chain) || fanout < 1 || fanout > 64) {
		fprintf(stderr,
			"usage: viz_tracegen --events N | --closures N [--fanout K] | --chain N\n");
		return 2;
	}
	static char buf[1 << 20];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	printf("{\"type\":\"header\",\"format\":\"closuretrace\",\"version\":1,\"pid\":4242,"
	       "\"exe\":\"/usr/bin/blockio\",\"start_ns\":1000}\n");
	printf("{\"type\":\"sym\",\"addr\":\"0x401000\",\"func\":\"submit_request\",\"file\":"
	       "\"src/req.c\",\"line\":20}\n");
	printf("{\"type\":\"sym\",\"addr\":\"0x401100\",\"func\":\"submit_bio\",\"file\":"
	       "\"src/bio.c\",\"line\":10}\n");
	printf("{\"type\":\"sym\",\"addr\":\"0x401110\",\"func\":\"submit_bio\",\"file\":"
	       "\"src/bio.c\",\"line\":12}\n");
	printf("{\"type\":\"sym\",\"addr\":\"0x401200\",\"func\":\"bio_endio\",\"file\":"
	       "\"src/bio.c\",\"line\":30}\n");
	printf("{\"type\":\"sym\",\"addr\":\"0x402000\",\"func\":\"request_done\",\"file\":"
	       "\"src/req.c\",\"line\":40}\n");
	if (want_chain)
		chain(want_chain);
	while ((want_events && nevents < want_events) ||
	       (want_closures && nclosures < want_closures))
		request(fanout, leak_every && ++n % leak_every == 0);
	printf("{\"type\":\"end\",\"events\":%" PRIu64 ",\"lost\":0,\"duration_ns\":%" PRIu64
	       ",\"reason\":\"exit\",\"exit_code\":0}\n",
	       nevents, ts);
	return 0;
}
