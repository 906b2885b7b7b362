/*
 * Each operation's own arguments, from the probe contract (closure_probes.h): their names, types
 * and the field of struct trace_event that holds each. The one table the trace writer, the trace
 * reader and the record-to-event conversion (top) all read, so that an operation added to the
 * contract is written, read and converted without a switch to extend.
 */
#ifndef CLOSURETRACE_TRACE_ARGS_H
#define CLOSURETRACE_TRACE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"

struct ct_event;

enum trace_arg_type {
	TRACE_ARG_NONE = CLOSURE_ARG_NONE,
	TRACE_ARG_ADDR = CLOSURE_ARG_ADDR, /* "0x..." */
	TRACE_ARG_BOOL = CLOSURE_ARG_BOOL, /* true, false */
	TRACE_ARG_INT = CLOSURE_ARG_INT,   /* signed */
	TRACE_ARG_BUG = CLOSURE_ARG_BUG,   /* a bug code, written by its name */
	TRACE_ARG_HOW = CLOSURE_ARG_HOW,   /* continue_at's how, written by its name */
	TRACE_ARG_FN = CLOSURE_ARG_FN,	   /* a code address, "0x...": its symbol names it */
};

struct trace_arg {
	const char *name; /* its JSON key; NULL: the operation has no such argument */
	size_t len;
	enum trace_arg_type type;
	size_t offset; /* of its field in struct trace_event */
};

/* The extra arguments (arg4..arg6) of each operation, in the contract's order. */
extern const struct trace_arg trace_op_args[TRACE_NR_OPS][3];

/* The argument of any operation named key (len bytes), or NULL: keys mean the same in every
 * operation, so a reader can place a field before it knows the operation. */
const struct trace_arg *trace_arg_find(const char *key, size_t len);

/* Sets a's field of ev from a raw probe value (a bug or how code is kept as its name or enum). */
void trace_arg_set(struct trace_event *ev, const struct trace_arg *a, uint64_t raw);

/* The value of a's field of ev as a trace writes it: "0x..." (ADDR, FN), true or false, a number,
 * a bug's or a how's name. Returns buf. */
const char *trace_arg_text(const struct trace_event *ev, const struct trace_arg *a, char *buf,
			   size_t len);

/* The value of a's field of ev as a number (an address, 0 or 1, the integer, a how's code; a bug's
 * name is not a number: 0). */
uint64_t trace_arg_value(const struct trace_event *ev, const struct trace_arg *a);

/* Whether a's field of ev is zero (no address, false, 0): what a presentation may leave out. */
bool trace_arg_is_zero(const struct trace_event *ev, const struct trace_arg *a);

/* The names of continue_at's how and of a bug code ("unknown" for a code not in the contract). */
const char *trace_how_name(uint64_t how);
const char *trace_bug_name(uint64_t bug);

/* The trace event that a recorder's record becomes: what the writer writes and the reader reads
 * back, for a consumer that skips the file (top, check). ts counts from start_ns; pid as the
 * writer's (0: not given); seq and line are the caller's. False: not an operation of the contract,
 * which the writer leaves out. */
bool trace_event_from_record(const struct ct_event *e, uint64_t start_ns, uint32_t pid,
			     struct trace_event *t);

#endif
