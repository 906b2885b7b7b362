/*
 * What `closuretrace top` shows: the closures in flight of a running process by kind (init site),
 * with their rates, oldest age, lifetimes and suspects, from the recorder's events fed into the
 * viz model (which forgets finished closures and keeps per-kind lifetime histograms, so memory
 * follows the live closures, not the time).
 */
#ifndef CLOSURETRACE_TOP_VIEW_H
#define CLOSURETRACE_TOP_VIEW_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct top_view;
struct ct_event;

/* A view of pid, whose event times count from start_ns (CLOCK_MONOTONIC). NULL: no memory. */
struct top_view *top_view_new(pid_t pid, uint64_t start_ns);
/* top --sample N: the frames say they are of one tree in N (0: every tree). */
void top_view_sample(struct top_view *v, uint32_t every);
void top_view_free(struct top_view *v);

/* The recording starts now (event times count from here; the first rates from here). */
void top_view_begin(struct top_view *v, uint64_t now_ns);

/* One recorded operation (a recorder_consumer's event: ctx is the view). */
void top_view_event(void *ctx, const struct ct_event *e, uint32_t pid);

/* Takes the numbers of a frame at now_ns (rates over the time since the last frame). */
void top_view_update(struct top_view *v, uint64_t now_ns);

/* Prints the last frame; at most rows lines of at most cols characters (0: no limit). */
void top_view_print(struct top_view *v, FILE *out, int rows, int cols);

#endif
