/*
 * An output written completely or not at all. A file named with -o is written to a temporary
 * file beside it (created O_EXCL, so never through a planted link) and renamed over it only when
 * every byte is written and closed: a failure leaves the previous file as it was. Standard output
 * and devices (/dev/stdout, a FIFO) are written in place, every write checked up to the final
 * flush and close.
 */
#ifndef CLOSURETRACE_OUT_FILE_H
#define CLOSURETRACE_OUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

struct out_file {
	FILE *f;	  /* write here */
	char *path;	  /* the target; NULL: standard output */
	char *tmp;	  /* the temporary file renamed over path; NULL: written in place */
	const char *cmd;  /* "closuretrace graph": names who complains */
	const char *name; /* what the messages call the output (borrowed) */
	int err;	  /* why the first failed write failed (out_failed); 0: none yet */
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
