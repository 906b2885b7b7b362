/*
 * Naming one closure (docs/design.md "Naming a closure"): ADDR, ADDR#N (its Nth life at that
 * address) or PID:ADDR#N in a trace of several processes. Every command that takes a closure parses
 * and looks it up here, so that they all accept the same names and refuse an ambiguous one the same
 * way.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "viz.h"

#define MAX_CANDIDATES 8

int viz_parse_closure(const char *s, struct model_id *id)
{
	const char *colon = strchr(s, ':');
	char *end;
	unsigned long long v;

	*id = (struct model_id){0};
	if (colon) {
		if (s[0] < '1' || s[0] > '9')
			return -1;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || end != colon || v > INT64_MAX)
			return -1;
		id->pid = (int64_t)v;
		s = colon + 1;
	}
	if (strncmp(s, "0x", 2) && strncmp(s, "0X", 2))
		return -1;
	if (!((s[2] >= '0' && s[2] <= '9') || (s[2] >= 'a' && s[2] <= 'f') ||
	      (s[2] >= 'A' && s[2] <= 'F')))
		return -1; /* strtoull would take a sign or spaces */
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	if (errno || !v)
		return -1;
	id->addr = v;
	if (*end == '#') {
		unsigned long n;

		if (end[1] < '1' || end[1] > '9')
			return -1;
		n = strtoul(end + 1, &end, 10);
		if (n > 1000000000UL)
			return -1;
		id->nth = (unsigned)n;
	}
	return *end ? -1 : 0;
}

/* "0x10 has lives in 2 processes of t.json: 501:0x10#1, 502:0x10#3; name one as PID:ADDR#N" */
static void ambiguous(struct viz_input *in, const struct model_id *id, const int64_t *pids,
		      size_t n, struct trace_error *err)
{
	char list[sizeof(err->text)];
	size_t used = 0;

	list[0] = '\0';
	for (size_t i = 0; i < n && i < MAX_CANDIDATES && used < sizeof(list); i++) {
		unsigned lives = model_lives_at(in->m, pids[i], id->addr);

		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s %lld:0x%" PRIx64 "#%u", i ? "," : "",
					 (long long)pids[i], id->addr, id->nth ? id->nth : lives);
	}
	if (n > MAX_CANDIDATES && used < sizeof(list))
		snprintf(list + used, sizeof(list) - used, ", ... (%zu more)", n - MAX_CANDIDATES);
	trace_error_set(err,
			"0x%" PRIx64 " has lives in %zu processes of %s:%s; name one as PID:ADDR#N",
			id->addr, n, in->path, list);
}

struct model_life *viz_find_closure(struct viz_input *in, const struct model_id *id,
				    struct trace_error *err)
{
	int64_t pids[MAX_CANDIDATES + 1];
	size_t n = model_processes_at(in->m, id->addr, pids, MAX_CANDIDATES + 1);
	struct model_life *l;
	unsigned lives;

	if (!id->pid && n > 1) {
		ambiguous(in, id, pids, n, err);
		return NULL;
	}
	l = model_find(in->m, id);
	if (l)
		return l;
	lives = n ? model_lives_at(in->m, id->pid ? id->pid : pids[0], id->addr) : 0;
	if (id->nth && lives)
		trace_error_set(err, "0x%" PRIx64 " had %u li%s%s, not #%u", id->addr, lives,
				lives == 1 ? "fe" : "ves", id->pid ? " in that process" : "",
				id->nth);
	else if (id->pid && n)
		trace_error_set(err, "no closure at 0x%" PRIx64 " in process %lld of %s", id->addr,
				(long long)id->pid, in->path);
	else
		trace_error_set(err, "no closure at 0x%" PRIx64 " in %s", id->addr, in->path);
	return NULL;
}
