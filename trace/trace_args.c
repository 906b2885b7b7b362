/* Each operation's own arguments, from the probe contract (trace_args.h). */
#include "trace_args.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "event.h"

/* One table entry per (TYPE, field) pair of the contract. */
#define ARG_NONE(field)                                                                            \
	{                                                                                          \
		NULL, 0, TRACE_ARG_NONE, 0                                                         \
	}
#define ARG_OF(field, t)                                                                           \
	{                                                                                          \
#field, sizeof(#field) - 1, t, offsetof(struct trace_event, field)                 \
	}
#define ARG_ADDR(field) ARG_OF(field, TRACE_ARG_ADDR)
#define ARG_FN(field)	ARG_OF(field, TRACE_ARG_FN)
#define ARG_BOOL(field) ARG_OF(field, TRACE_ARG_BOOL)
#define ARG_INT(field)	ARG_OF(field, TRACE_ARG_INT)
#define ARG_BUG(field)	ARG_OF(field, TRACE_ARG_BUG)
#define ARG_HOW(field)	ARG_OF(field, TRACE_ARG_HOW)

const struct trace_arg trace_op_args[TRACE_NR_OPS][3] = {
#define OP_ARGS(name, NAME, a4, a5, a6)                                                            \
	[TRACE_##NAME] = {CLOSURE_ARG_APPLY(ARG, a4), CLOSURE_ARG_APPLY(ARG, a5),                  \
			  CLOSURE_ARG_APPLY(ARG, a6)},
	CLOSURE_PROBE_LIST(OP_ARGS)
#undef OP_ARGS
};

/* The operations of both sides are the contract's, in its order. */
_Static_assert((int)TRACE_NR_OPS == (int)CT_NR_OPS, "trace_op and ct_kind number the same probes");

const struct trace_arg *trace_arg_find(const char *key, size_t len)
{
	for (size_t op = 0; op < TRACE_NR_OPS; op++)
		for (size_t i = 0; i < 3; i++) {
			const struct trace_arg *a = &trace_op_args[op][i];

			if (a->name && a->len == len && !memcmp(a->name, key, len))
				return a;
		}
	return NULL;
}

const char *trace_how_name(uint64_t how)
{
	switch (how) {
#define HOW_NAME(name, code, trace_name)                                                           \
	case code:                                                                                 \
		return trace_name;
		CLOSURE_HOW_LIST(HOW_NAME)
#undef HOW_NAME
	}
	return "unknown";
}

const char *trace_bug_name(uint64_t bug)
{
	switch (bug) {
#define BUG_NAME(name, code, trace_name, meaning)                                                  \
	case code:                                                                                 \
		return trace_name;
		CLOSURE_BUG_LIST(BUG_NAME)
#undef BUG_NAME
	}
	return "unknown";
}

void trace_arg_set(struct trace_event *ev, const struct trace_arg *a, uint64_t raw)
{
	char *field = (char *)ev + a->offset;

	switch (a->type) {
	case TRACE_ARG_ADDR:
	case TRACE_ARG_FN:
		*(uint64_t *)field = raw;
		break;
	case TRACE_ARG_BOOL:
		*(bool *)field = raw != 0;
		break;
	case TRACE_ARG_INT:
		*(int64_t *)field = (int64_t)raw;
		break;
	case TRACE_ARG_HOW:
		/* A code the contract lacks is written "unknown", which reads back as continue_at.
		 */
		*(enum trace_how *)field = strcmp(trace_how_name(raw), "unknown")
						   ? (enum trace_how)raw
						   : TRACE_HOW_CONTINUE_AT;
		break;
	case TRACE_ARG_BUG:
		snprintf(field, sizeof(ev->bug), "%s", trace_bug_name(raw));
		break;
	case TRACE_ARG_NONE:
		break;
	}
}

const char *trace_arg_text(const struct trace_event *ev, const struct trace_arg *a, char *buf,
			   size_t len)
{
	const char *field = (const char *)ev + a->offset;

	switch (a->type) {
	case TRACE_ARG_ADDR:
	case TRACE_ARG_FN:
		snprintf(buf, len, "0x%" PRIx64, *(const uint64_t *)field);
		break;
	case TRACE_ARG_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "true" : "false");
		break;
	case TRACE_ARG_INT:
		snprintf(buf, len, "%" PRId64, *(const int64_t *)field);
		break;
	case TRACE_ARG_HOW:
		snprintf(buf, len, "%s", trace_how_name(*(const enum trace_how *)field));
		break;
	case TRACE_ARG_BUG:
		snprintf(buf, len, "%s", field);
		break;
	case TRACE_ARG_NONE:
		snprintf(buf, len, "%s", "");
		break;
	}
	return buf;
}

uint64_t trace_arg_value(const struct trace_event *ev, const struct trace_arg *a)
{
	const char *field = (const char *)ev + a->offset;

	switch (a->type) {
	case TRACE_ARG_ADDR:
	case TRACE_ARG_FN:
		return *(const uint64_t *)field;
	case TRACE_ARG_BOOL:
		return *(const bool *)field;
	case TRACE_ARG_INT:
		return (uint64_t) * (const int64_t *)field;
	case TRACE_ARG_HOW:
		return (uint64_t) * (const enum trace_how *)field;
	case TRACE_ARG_BUG:
	case TRACE_ARG_NONE:
		break;
	}
	return 0;
}

bool trace_arg_is_zero(const struct trace_event *ev, const struct trace_arg *a)
{
	if (a->type == TRACE_ARG_BUG)
		return !*((const char *)ev + a->offset);
	return !trace_arg_value(ev, a);
}

bool trace_event_from_record(const struct ct_event *e, uint64_t start_ns, uint32_t pid,
			     struct trace_event *t)
{
	const uint64_t raw[3] = {e->x4, e->x5, e->x6};

	memset(t, 0, sizeof(*t));
	t->ts = (int64_t)(e->ts - start_ns);
	t->tid = e->tid;
	t->pid = pid;
	t->op = (enum trace_op)e->kind;
	t->cl = e->cl;
	t->remaining = e->count;
#define FLAG_BIT(name, bit, letter)                                                                \
	if (e->flags & (1u << (bit)))                                                              \
		t->flags |= TRACE_FLAG_##name;
	CLOSURE_FLAG_LIST(FLAG_BIT)
#undef FLAG_BIT
	t->ip = e->ip;
	t->snapshot = e->kind == CT_INIT && (e->pad & CT_EVENT_SNAPSHOT);
	t->timeout_ms = -1; /* as the reader: a sync without a timeout */
	if (e->kind >= CT_NR_OPS)
		return false;
	for (size_t i = 0; i < 3; i++)
		if (trace_op_args[e->kind][i].name)
			trace_arg_set(t, &trace_op_args[e->kind][i], raw[i]);
	return true;
}
