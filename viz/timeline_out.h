/*
 * What the timeline writes with (private to viz/timeline*.c): trace-event JSON one event a line,
 * and the tracks (processes and threads) with what names them.
 */
#ifndef CLOSURETRACE_TIMELINE_OUT_H
#define CLOSURETRACE_TIMELINE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xalloc.h"

struct tl_out {
	FILE *f;
	uint64_t events;
	bool in_args;
	unsigned nargs;
};

void tlo_begin(struct tl_out *o, FILE *f);
/* Closes the events; other_data: the "otherData" object's members, or NULL for none. */
void tlo_end(struct tl_out *o, const char *other_data);
/* Opens one event: {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":.. (ts in ns, written in
 * µs with three decimals, as the format counts). cat NULL: none. Close it with tlo_close(). */
void tlo_open(struct tl_out *o, char ph, const char *cat, const char *name, int64_t pid,
	      int64_t tid, int64_t ts_ns);
void tlo_id(struct tl_out *o, uint64_t id);
void tlo_dur(struct tl_out *o, int64_t dur_ns);
void tlo_raw(struct tl_out *o, const char *text); /* a literal field: ,"s":"t" */
void tlo_arg_str(struct tl_out *o, const char *key, const char *val);
void tlo_arg_int(struct tl_out *o, const char *key, long long val);
void tlo_close(struct tl_out *o);

/* ---- tracks ---- */

struct tl_tracks;

struct tl_tracks *tlt_new(void);
void tlt_free(struct tl_tracks *t);
/* A thread wrote an event (it gets a name at the end); ran: the continuation it ran (0: none). */
void tlt_thread_used(struct tl_tracks *t, int64_t pid, int64_t tid);
void tlt_thread_ran(struct tl_tracks *t, int64_t pid, int64_t tid, uint64_t fn, uint64_t wq);
/* Name every process and thread that has an event: metadata events ("M"), threads by what the
 * model knows of them (the names the process gave, the continuations they ran). exe names
 * main_pid; other processes are named after it. */
struct model;
void tlt_write_names(struct tl_tracks *t, struct tl_out *o, int64_t main_pid, const char *exe,
		     struct model *m);

#endif
