/*
 * The batched transport in a recording session: closure:batch records from the ring buffer are
 * decoded, put back in time order and written as the same events the per-operation probes give;
 * at stop, what the processes still hold in their buffers is drained. Launched commands are
 * recorded losslessly: the library waits (bounded) while the recorder is behind.
 */
#ifndef CLOSURETRACE_SESSION_BATCH_H
#define CLOSURETRACE_SESSION_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch_proc.h"
#include "event.h"

struct session;

/* How often the buffers of idle threads are read while recording, and how old they must be. */
#define BATCH_POLL_NS (20 * 1000 * 1000ull)
#define BATCH_IDLE_NS (10 * 1000 * 1000ull)
/*
 * Under -p, each poll tells the library that the recorder reads the buffers in place for this
 * long (the registry's polled_until): it then hands a buffer over only when full, sparing the
 * process most of its batch probe traps. Four polls' worth: a recorder held up (or gone) longer
 * lets the library hand over by age again.
 */
#define BATCH_POLLED_AHEAD_NS (4 * BATCH_POLL_NS)

/* A full batch in the ring buffer, with the ring's own 8-byte header. */
#define BATCH_BYTES_MAX (8 + sizeof(struct ct_batch_event) + CT_BATCH_MAX * CT_BATCH_RECORD_SIZE)

/* Not known yet: a registry found at attach (record -p), before the process's first batch. */
#define BATCH_IMAGE_UNKNOWN UINT32_MAX

/*
 * A traced process's image (until it execs) whose registry the recorder knows: from a batch it
 * handed over, or (record -p) from its libclosure's exported symbol at attach.
 */
struct batch_process {
	uint32_t pid;
	uint32_t image; /* its exec count: records of another image are another stream */
	/*
	 * The image in its streams' keys (batch_stream_key): image, but for one found at attach,
	 * a number of its own, kept when its first batch tells the image (the records read
	 * before then keep their keys).
	 */
	uint32_t stream;
	bool gone;	/* exec'ed or exited: its registry is not there to read or write any more */
	bool gone_told; /* a sweep was told that its streams are done (batch_decoder_gone) */
	uint64_t registry;
	uint64_t handed; /* the highest total received */
	uint64_t acked;	 /* what the process was last told */
	struct batch_poll poll;
	/* Whole trees or nothing (docs/probes.md): the registry's counters when last read (from
	 * a batch, or the registry itself), and when this recording set its session (-p). */
	bool sampling;	  /* the counters below are this recording's (from the bases) */
	bool session_set; /* -p: this recording set the registry's session */
	uint64_t trees, trees_left_out;
	uint64_t trees_base, left_out_base;
	/* Records its library says it dropped: its own count (session_batch_claim). */
	uint64_t claimed;
	uint64_t cpu_ns, cpu_read_ns; /* its CPU time, and when it was read (our clock) */
};

/* Prepares s for batches (events not before not_before_ns). 0, or -ENOMEM. */
int session_batch_init(struct session *s, uint64_t not_before_ns);

/*
 * Before the programs load: the drains at thread exit and exec need the kernel's BTF (CO-RE);
 * without it they are left out (records a killed thread holds are then lost). The exec drain is
 * at sched_prepare_exec, or at the exec syscalls' entry when s->exec_syscalls (before 6.10).
 */
void session_batch_setup(struct session *s);

/* After load: attaches the drains at thread exit and exec (a failure leaves them out). */
void session_batch_attach(struct session *s);

/* A ring-buffer record of kind CT_BATCH: false when it is not one. */
bool session_batch_record(struct session *s, const void *data, size_t size);

/*
 * Once per loop: tells waiting processes what was received; every BATCH_POLL_NS begins a sweep
 * (batch_decode.h) and takes the records idle threads hold; commits the sweep, which writes the
 * events no thread can still precede, once the ring buffer is read past its poll.
 */
void session_batch_tick(struct session *s);

/* At stop: drains the buffers of the processes still alive and writes every event held. */
void session_batch_stop(struct session *s);

/*
 * Records lost on the way: dropped by the library, or handed over and never received (a batch
 * that found the ring buffer full, less what a poll or drain got of it). After session_batch_stop.
 */
uint64_t session_batch_lost(struct session *s);

void session_batch_free(struct session *s);

#endif
