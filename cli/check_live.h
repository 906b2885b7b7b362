/*
 * check judges as the command runs: the recorder's live consumer (recorder.h) feeding the model
 * of check's verdict. Every record is converted as the trace's reader would read it back
 * (trace_event_from_record, trace_live.h), so the verdict is the one the trace file would give;
 * the file is written only when asked (--keep-trace, --export).
 */
#ifndef CLOSURETRACE_CHECK_LIVE_H
#define CLOSURETRACE_CHECK_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "check_diag.h"
#include "recorder.h"

struct check_live {
	struct check_verdict *v; /* borrowed: check_verdict_begin'd, fed here */
	uint64_t start_ns;	 /* the header's: event times count from it */
	uint64_t seq;		 /* events so far: the reader's position in the file */
	bool out_of_memory;
};

/* The consumer; its ctx is a struct check_live. */
extern const struct recorder_consumer check_live_consumer;

#endif
