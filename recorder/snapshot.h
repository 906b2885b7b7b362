/*
 * record -p and top begin with the closures alive at attach (docs/trace-format.md, "snapshot"):
 * read from the process's live list (CLOSURE_DEBUG builds, what ps reads) once the probes are
 * attached, each written as a synthetic init, so that a closure made before the recording (a
 * leak among them) is judged like any other. What the snapshot keeps out of the events that
 * follow: snapshot_keep.h.
 */
#ifndef CLOSURETRACE_SNAPSHOT_H
#define CLOSURETRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

struct session;

/*
 * After the attach, before any event is written: a synthetic init (marked CT_EVENT_SNAPSHOT) for
 * every live closure initialised before on_ns (when every init was surely recorded). Without a
 * live list (not a CLOSURE_DEBUG build), nothing. Returns the closures written.
 */
size_t snapshot_write(struct session *s, uint64_t on_ns);

#endif
