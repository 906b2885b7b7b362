/*
 * The presentations of a trace: the report, the graph, the life of one closure. Each loads the
 * trace into a model (viz_load), then renders it.
 */
#ifndef CLOSURETRACE_VIZ_H
#define CLOSURETRACE_VIZ_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "leaks.h"
#include "model.h"
#include "trace_reader.h"

struct viz_input {
	const char *path;
	struct model *m; /* owned */
	struct trace_info info;
	struct leaks_summary leaks;
};

/* What a loaded model keeps of the finished closures: none (report), every one, or a number N:
 * N of each kind under each parent, the rest folded into counts (model_fold_finished). */
#define VIZ_KEEP_NONE 0u
#define VIZ_KEEP_ALL  UINT_MAX
/*
 * Read path into a model and judge it. keep: VIZ_KEEP_*, or a number; watch: keep the events of
 * the closures it names (NULL: none). Returns 0, or -1 with err saying why (bad input).
 */
int viz_load(const char *path, unsigned keep, const struct model_id *watch, struct viz_input *in,
	     struct trace_error *err);

#define VIZ_MAX_WARNINGS 2
/* What makes the verdicts of a loaded trace incomplete (cut short, lost events), one line each
 * ("FILE: warning: ..."), for the command to print; returns how many lines. */
unsigned viz_warnings(const struct viz_input *in, char lines[VIZ_MAX_WARNINGS][256]);
/* Frees what viz_load put in in (the model and the info); in itself is the caller's. */
void viz_unload(struct viz_input *in);

/*
 * How the recording ended, from the trailer (docs/trace-format.md, "end"): the one rule for what
 * an unfinished closure can be, used by every presentation and by check. The recording was cut
 * short when its reason is not "exit" (or cut_short says so); the process ended with it when the
 * trailer gives the launched command's status. A trace without a trailer says nothing.
 */
enum leaks_end viz_end(const struct trace_info *info);
/* After the last event: settle the model and judge its unfinished closures by viz_end(info). */
void viz_judge(struct model *m, const struct trace_info *info, struct leaks_summary *out);
/* How the recording ended, in words: "the recording was cut short (timeout) and the process
 * ended with it" and its like. Writes into buf (caller-owned), returns it. */
const char *viz_end_text(const struct trace_info *info, char *buf, size_t len);

/* Whether the verdicts are incomplete (lost events or a truncated trace). */
bool viz_incomplete(const struct viz_input *in);

/* The text report (perf report's spirit), or with json one JSON document. in is borrowed. */
int render_report(struct viz_input *in, FILE *out, bool json);

struct render_graph_opts {
	const char *format; /* "svg", "png", "pdf", "dot" */
	bool leaks_only;    /* only leaked closures and their ancestors */
	bool no_fold;
	struct model_id root; /* root.addr 0: every tree */
};

/*
 * Draw the closure trees with libgvc into out (the caller checks the stream when it closes it;
 * errno then says why a write failed). Returns 0, or -1 with err saying why (no such root,
 * Graphviz refused, out of memory).
 */
int render_graph(struct viz_input *in, const struct render_graph_opts *opts, FILE *out,
		 struct trace_error *err);

/* The life of the closure id names, one line per operation. Returns 0, or -1 with err saying why
 * it names none (or several), as viz_find_closure says it. */
int render_explain(struct viz_input *in, const struct model_id *id, FILE *out,
		   struct trace_error *err);

/* Parse a closure's name: "0x7ffc5e2a0010", "0x7ffc5e2a0010#2", "501:0x7ffc5e2a0010" or
 * "501:0x7ffc5e2a0010#2". Returns 0, or -1. */
int viz_parse_closure(const char *s, struct model_id *id);
/* What viz_parse_closure accepts, for usage errors (static). */
#define VIZ_CLOSURE_SYNTAX "ADDR, ADDR#N or PID:ADDR#N (like 0x7ffc5e2a0010#2)"

/*
 * The life id names in in. NULL when there is none, or when id gives no pid and the address has
 * lives in several processes; then err says so (with no place: the command says whose it is),
 * naming the candidates.
 */
struct model_life *viz_find_closure(struct viz_input *in, const struct model_id *id,
				    struct trace_error *err);

#endif
