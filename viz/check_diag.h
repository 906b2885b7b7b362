/*
 * check's verdict as compiler-style diagnostics: every leaked or stuck closure of a model becomes
 * an error on the call site to blame, with notes (its init site, the parents it keeps alive), and
 * identical ones (same site, same kind) are folded into one with a count.
 */
#ifndef CLOSURETRACE_CHECK_DIAG_H
#define CLOSURETRACE_CHECK_DIAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "check_supp.h"
#include "leaks.h"
#include "trace_reader.h"

#define CHECK_MAX_NOTES 8

struct check_note {
	struct check_site at;
	char text[512];
};

struct check_diag {
	enum check_rule rule;
	bool hang_root;		/* the root of a hang (leaks.h): told before every other */
	struct check_site at;	/* where the error points (strings borrowed from the model) */
	struct check_site init; /* the closure's init site */
	const char *closure;	/* what the closure does: its continuation, else its function */
	const char *verdict;	/* its word, as every output says it (leaks_word; static) */
	char id[64];		/* the first closure's PID:ADDR#N (of count folded alike) */
	char message[640];
	char *key; /* site, init site, closure function, blame: equal keys fold (owned) */
	unsigned count;
	struct check_note notes[CHECK_MAX_NOTES];
	unsigned nnotes;
	const struct supp_entry *suppressed; /* borrowed; NULL when shown */
	/* --stacks: the stack of the blamed site, innermost first (owned; check_frames.c) */
	struct check_site *frames;
	unsigned nframes;
	bool frames_of_init; /* the blamed site had none: the closure's init's */
};

struct check_diags {
	struct check_diag *v; /* owned, sorted by file and line */
	size_t n;
	unsigned long closures, suppressed_closures; /* counted with the folded ones */
	unsigned long late;	 /* lives seen only after their closure finished: not judged */
	unsigned long in_flight; /* a recording cut short: in flight, not stuck, not judged */
};

/* Collects the diagnostics of m (after model_end and leaks_analyze, whose summary is leaks).
 * 0, or -1 out of memory. */
int check_diags_collect(struct model *m, const struct leaks_summary *leaks,
			struct check_diags *out);
void check_diags_free(struct check_diags *d);

/* check's verdict on a trace: the model, how the recording ended, the summary, the diagnostics. */
struct check_verdict {
	struct model *m;
	struct trace_info info;
	struct leaks_summary leaks;
	struct check_diags diags;
};

/*
 * Reads the trace at path and judges it as check does (a closure is leaked or stuck only in a
 * process that exited). Returns 0; -1 when the trace is bad (err says FILE:LINE: error: ...);
 * -2 out of memory. v is filled (free it with check_verdict_free) on 0 only.
 */
int check_judge(const char *path, struct check_verdict *v, struct trace_error *err);
void check_verdict_free(struct check_verdict *v);

/*
 * The same in two steps, for a recording judged as it happens (cli/check_live.c): begin gives v
 * an empty model, which the caller feeds (model_sink) with v->info filled as the reader would;
 * judge then judges it. judge returns 0, or -2 out of memory (v freed).
 */
void check_verdict_begin(struct check_verdict *v);
int check_verdict_judge(struct check_verdict *v);

/* Marks the diagnostics that supp hides. */
void check_diags_suppress(struct check_diags *d, struct check_supp *supp);

/* A site's file as diagnostics show it, relative to its source root (source_path.h): as shown
 * (trace_text.h), or in its own bytes when bytes is true (SARIF's URIs). s->file not NULL. */
const char *check_site_file(const struct check_site *s, bool bytes);

/*
 * Writes a suppression entry (check_supp.h) for each diagnostic that is not suppressed, after a
 * comment with its message: site:FILE:LINE where the error points, else fun:FUNCTION. Fed back
 * with --suppressions, they hide exactly these. Returns the number of entries written.
 */
unsigned check_diags_write_suppressions(const struct check_diags *d, FILE *out);

/* A call site as diagnostics name it (strings borrowed from m). */
struct check_site check_site_at(struct model *m, uint64_t ip);
/* check_frames.c: d's frames for life l from m's stacks (none when the trace has none): 0, or -1
 * out of memory; and their lines, "    #0 FILE:LINE (function)", under the error. */
int check_diag_frames(struct check_diag *d, struct model *m, const struct model_life *l);
void check_diag_print_frames(const struct check_diag *d, FILE *out);

/* Prints the diagnostics that are not suppressed, FILE:LINE: error: ... then the notes. */
void check_diags_print(const struct check_diags *d, FILE *out);

#endif
