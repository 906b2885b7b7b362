/*
 * Reading a closuretrace trace (docs/trace-format.md): a streaming reader that hands each record to
 * callbacks, one line at a time, so memory does not grow with the number of events.
 */
#ifndef CLOSURETRACE_TRACE_READER_H
#define CLOSURETRACE_TRACE_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "closure_probes.h"
#include "trace_error.h"

#include "trace_format.h"

/* The longest line a reader accepts (docs/trace-format.md): a file without newlines (/dev/zero)
 * is refused with bounded memory. Records the recorder writes are far shorter. */
#define TRACE_MAX_LINE (16 << 20)

/* The operations: the probes of the contract (closure_probes.h), in its order. */
/* clang-format off: the list expansion confuses its indentation */
enum trace_op {
#define TRACE_OP_ENUM(name, NAME, a4, a5, a6) TRACE_##NAME,
	CLOSURE_PROBE_LIST(TRACE_OP_ENUM)
#undef TRACE_OP_ENUM
		TRACE_NR_OPS,
};
/* clang-format on */

/* continue_at's "how" (closure_probes.h) */
enum trace_how {
#define TRACE_HOW_ENUM(name, code, trace_name) TRACE_HOW_##name = code,
	CLOSURE_HOW_LIST(TRACE_HOW_ENUM)
#undef TRACE_HOW_ENUM
};

/* Flag letters of an event (closure_probes.h), as bits in the contract's order. */
enum {
#define TRACE_FLAG_INDEX(name, bit, letter) TRACE_FLAG_INDEX_##name,
	CLOSURE_FLAG_LIST(TRACE_FLAG_INDEX)
#undef TRACE_FLAG_INDEX
};
enum {
#define TRACE_FLAG_ENUM(name, bit, letter) TRACE_FLAG_##name = 1 << TRACE_FLAG_INDEX_##name,
	CLOSURE_FLAG_LIST(TRACE_FLAG_ENUM)
#undef TRACE_FLAG_ENUM
};

/* One event, plain values only (no pointers), so that it can be copied and queued. */
struct trace_event {
	int64_t ts;   /* ns since start_ns: negative for an event caught just before it */
	uint64_t seq; /* position in the file: breaks ties between equal timestamps */
	uint64_t line;
	int64_t tid;
	int64_t pid; /* the process, when the trace has several (check); 0: not given */
	enum trace_op op;
	uint64_t cl;
	int64_t remaining;
	unsigned flags;
	uint64_t ip;
	uint64_t parent; /* init, finish */
	bool stack;	 /* init */
	bool snapshot;	 /* init: made by the recorder, the closure was alive at attach */
	bool not_zero;	 /* get */
	int64_t v;	 /* sub */
	uint64_t fn, wq; /* continue_at, run, destructor (fn) */
	enum trace_how how;
	uint64_t waitlist;  /* wait, wake */
	int64_t timeout_ms; /* sync_begin */
	int64_t ret;	    /* sync_end */
	char bug[16];	    /* bug */
};

/* A sym record; the strings are borrowed for the duration of the callback (NULL: not known). */
struct trace_sym {
	uint64_t addr;
	const char *func, *file, *obj;
	const char *dir; /* the folder file was compiled in; NULL in older traces */
	long line;
};

/* What the header and the trailer said, and how the reading went. */
struct trace_info {
	long version;
	long long pid;
	char *exe; /* owned by the info; freed by trace_info_clear() */
	bool has_end;
	long long end_events, lost, duration_ns;
	char *reason;	 /* owned; NULL when not given */
	bool has_status; /* the end record gives the launched command's exit_code or signal */
	bool cut_short;	 /* the end record says the recording was cut short */
	/* Whole trees or nothing: the end record's sample (1 in N; 0: not sampled) and, when the
	 * library counted them, the root closures decided and those left out with their trees. */
	long long sample;
	bool has_trees;
	long long trees, trees_left_out;
	long long snapshot_missed; /* closures from before the recording left out (0: none) */
	/* closures first seen mid-life: read, left out gone when read, left out past the bound */
	long long midlife_read, midlife_unread, midlife_limited;
	char *unread_why; /* owned; why the closures from before could not be read (NULL: they
			     could) */
	long long lost_claimed;	   /* of lost, the processes' own count of drops (0: none) */
	long long claims_refused;  /* drops claimed beyond their CPU time: refused, not lost */
	uint64_t events_read;
	uint64_t lines;
};

/* A module record; the strings are borrowed for the duration of the callback. */
struct trace_module {
	const char *path;
	const char *build_id; /* hex; NULL when the record gives none (older traces) */
};

/* A thread or workqueue record: the name the traced process gave (its bytes as it gave them,
 * borrowed for the duration of the callback; at most TRACE_NAME_MAX bytes: a longer one is cut). */
#define TRACE_NAME_MAX 64
enum trace_name_kind { TRACE_NAME_THREAD, TRACE_NAME_WORKQUEUE };
struct trace_name {
	enum trace_name_kind kind;
	long long pid; /* 0: the record names no process (the header's) */
	uint64_t id;   /* the thread id, or the workqueue's address */
	const char *name;
};

/* The most "frames" an event may carry (bpf/event.h CT_STACK_MAX, --stacks' bound). */
#define TRACE_FRAMES_MAX 64

struct trace_sink {
	void (*event)(void *ctx, const struct trace_event *ev);
	/* Optional: an event's "frames" (--stacks), n > 0 addresses innermost first, borrowed for
	 * the call; called just before event() for the same event. */
	void (*frames)(void *ctx, const struct trace_event *ev, const uint64_t *ips, unsigned n);
	void (*sym)(void *ctx, const struct trace_sym *sym);
	void (*module)(void *ctx, const struct trace_module *mod); /* optional */
	void (*name)(void *ctx, const struct trace_name *name);	   /* optional */
	/* optional: after the header, before any other record; info holds what it said */
	void (*header)(void *ctx, const struct trace_info *info);
};

/*
 * Read the trace at path ("-" for standard input), calling sink for every event and sym record
 * in file order. Returns 0, or -1 with err saying why ("FILE:LINE: error: ..."; bad input).
 * A trace without its end record is read to its last full line and info->has_end is false.
 * info is filled (caller owns it and frees it with trace_info_clear()).
 */
int trace_read(const char *path, const struct trace_sink *sink, void *ctx, struct trace_info *info,
	       struct trace_error *err);

void trace_info_clear(struct trace_info *info);

/* "init", "get", ... for an op (static strings). */
const char *trace_op_name(enum trace_op op);

#endif
