/*
 * The trace format's constants (docs/trace-format.md), defined once: the writer writes them, the
 * reader checks them, the views and the recorder name an end by them.
 */
#ifndef CLOSURETRACE_TRACE_FORMAT_H
#define CLOSURETRACE_TRACE_FORMAT_H

/* The header's "format", and the version this tool writes; a reader refuses a newer one. */
#define TRACE_FORMAT_NAME    "closuretrace"
#define TRACE_FORMAT_VERSION 1

/*
 * Why a recording ended: the trailer's "reason". X(NAME, name, what cut the recording short, in
 * the views' words; NULL for exit, which is no cut). A reason not listed (a newer recorder's) is
 * a cut too, named as it is written.
 */
#define TRACE_END_LIST(X)                                                                          \
	X(EXIT, "exit", NULL)                                                                      \
	X(SIGNAL, "signal", "a stop signal")                                                       \
	X(DURATION, "duration", "--duration")                                                      \
	X(TIMEOUT, "timeout", "check --timeout")                                                   \
	X(WRITE, "write", "a write error")

enum trace_end_reason {
#define TRACE_END_ENUM(NAME, name, by) TRACE_END_##NAME,
	TRACE_END_LIST(TRACE_END_ENUM)
#undef TRACE_END_ENUM
};

/* The trailer's word for a reason. */
const char *trace_end_name(enum trace_end_reason r);

/* What cut a recording short, in words, for a trailer's reason; NULL for "exit" or a reason not
 * in the list. */
const char *trace_end_cut_by(const char *reason);

#endif
