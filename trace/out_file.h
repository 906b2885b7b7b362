/*
 * An output a command writes (a picture, SARIF, a timeline, suppressions, a listing), whole or not
 * at all by trace_out.h's one rule (a temporary file beside the target, synced and renamed over it
 * once complete; links, devices and modes as said there), with the command's messages: every
 * failure is said once, "CMD: cannot write NAME: why". Standard output is written in place, every
 * write checked up to the final flush.
 */
#ifndef CLOSURETRACE_OUT_FILE_H
#define CLOSURETRACE_OUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "trace_out.h"

struct out_file {
	FILE *f;	    /* write here */
	struct trace_out t; /* the file; unused for standard output */
	bool file;	    /* written through t (not standard output) */
	const char *cmd;    /* "closuretrace graph": names who complains */
	const char *name;   /* what the messages call the output (borrowed) */
	int err;	    /* why the first failed write failed (out_failed); 0: none yet */
};

/* Open path for writing (NULL or "-": standard output). Returns 0, or -1 after printing why. */
int out_open(struct out_file *o, const char *cmd, const char *path);
/* Whether a write to the output has failed yet (remembering why, for out_commit's message):
 * a writer that runs on (top, a long list) stops at the first failure. */
bool out_failed(struct out_file *o);
/* Flush, close and put the output in place. Returns 0, or -1 after printing why (nothing is
 * left half written where a file was asked for). */
int out_commit(struct out_file *o);
/* Give up: the temporary file goes, the target stays as it was. */
void out_abort(struct out_file *o);

#endif
