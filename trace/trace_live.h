/*
 * A recording judged as it happens (check): what the recorder hands its live consumer, turned
 * into what a reader of the trace gets back from the same records, so that the model sees the
 * same whether or not the trace went through a file. The events' own conversion is
 * trace_event_from_record (trace_args.h); this is the header, the sym records and the trailer.
 */
#ifndef CLOSURETRACE_TRACE_LIVE_H
#define CLOSURETRACE_TRACE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace_reader.h"
#include "trace_writer.h"

/* The header's pid and exe (NULL: none) into info, as the reader fills it. 0, or -1 out of
 * memory. */
int trace_live_header(struct trace_info *info, pid_t pid, const char *exe);

/* A sym record as the reader hands it on; out's strings are s's (borrowed as long as s). */
void trace_live_sym(uint64_t addr, const struct sym_info *s, struct trace_sym *out);

/*
 * A thread or workqueue record as the reader hands it on: false when there is none (a kind the
 * writer does not write, a thread id the reader refuses). out->name is name, or buf (cut as the
 * reader cuts it).
 */
bool trace_live_name(unsigned kind, uint32_t pid, uint64_t id, const char *name,
		     struct trace_name *out, char buf[TRACE_NAME_MAX + 1]);

/* The trailer into info, as the reader reads back the end record the writer writes. 0, or -1 out
 * of memory. */
int trace_live_end(struct trace_info *info, const struct trace_end *end);

#endif
