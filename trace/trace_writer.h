/* Writing a trace file: JSON Lines as docs/trace-format.md defines them. */
#ifndef CLOSURETRACE_TRACE_WRITER_H
#define CLOSURETRACE_TRACE_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ct_event;

/* A code address resolved (process/symbols.c fills it): what a sym record says. */
struct sym_info {
	const char *obj;  /* the object's path; NULL when the address is in no known object */
	const char *func; /* NULL when unknown */
	const char *file; /* NULL without DWARF */
	const char *dir;  /* the folder file was compiled in (DW_AT_comp_dir); NULL when unknown */
	int line;	  /* 0 without DWARF */
	char buf[4096];	  /* storage for file and func when they are built */
};

struct trace_end {
	uint64_t events, lost, duration_ns;
	uint64_t complete_ns; /* when the trace was complete, after the records kept at the stop */
	const char *reason;   /* trace_end_name (trace_format.h) */
	int exit_code;	      /* -1: none */
	int signal;	      /* 0: none */
	bool cut_short;	      /* the recorder ended a launched command before it finished */
	unsigned abrupt;      /* processes that ended without their exit handlers (the sink) */
	/* Whole trees or nothing (docs/trace-format.md): --sample N (0: every tree), and, when
	 * the library counted them, the root closures decided and those left out. */
	uint32_t sample_every;
	bool trees_counted;
	uint64_t trees, trees_left_out;
	/* record -p: closures from before the recording that its snapshot did not see, left out */
	uint64_t snapshot_missed;
	/* record -p: closures first seen mid-life read from the process, and left out (gone when
	 * read; past the bound of reads a second); why the closures from before the recording could
	 * not be read at all (NULL: they could, or the recording did not join late) */
	uint64_t midlife_read, midlife_unread, midlife_limited;
	const char *unread_why;
	/* Of lost, the records the traced processes say their library dropped (their own count,
	 * not verified); and the claims refused as more than their CPU time could have made (not
	 * in lost). */
	uint64_t lost_claimed, claims_refused;
};

/* Whether the end record gives the launched command's exit_code or signal. */
static inline bool trace_end_has_status(const struct trace_end *end)
{
	return end->exit_code >= 0 || end->signal > 0;
}

/* Whether the end record says the recording was sampled (one tree in sample_every). */
static inline bool trace_end_sampled(const struct trace_end *end)
{
	return end->sample_every >= 2;
}

void trace_write_header(FILE *f, pid_t pid, const char *exe, char *const *argv, uint64_t start_ns);
/* pid: the process of the event's thread, written when not 0 (check follows several). */
void trace_write_event(FILE *f, const struct ct_event *e, uint64_t start_ns, uint32_t pid);
/* The same with the event's user stack (--stacks): n addresses, innermost first (0: none). */
void trace_write_event_frames(FILE *f, const struct ct_event *e, uint64_t start_ns, uint32_t pid,
			      const uint64_t *ips, unsigned n);
void trace_write_sym(FILE *f, uint64_t addr, const struct sym_info *s);
void trace_write_module(FILE *f, const char *path, uint64_t base, const char *build_id);
/* A name the traced process gave (closure_batch.h's name records): kind CLOSURE_NAME_THREAD (id:
 * a thread id) or CLOSURE_NAME_WORKQUEUE (id: the workqueue's address); pid written when not 0.
 * Other kinds are not written. */
void trace_write_name(FILE *f, unsigned kind, uint32_t pid, uint64_t id, const char *name);
void trace_write_end(FILE *f, const struct trace_end *end);

/* The event's name (`ev`), or NULL for an unknown kind. */
const char *trace_event_name(unsigned kind);

#endif
