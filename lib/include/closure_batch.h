/* SPDX-License-Identifier: MIT */
/*
 * The batched event format (version 4): what libclosure hands over in one closure:batch probe
 * hit, what it writes to an in-process sink, and the registry a recorder reads at stop to drain
 * what is still buffered. docs/probes.md ("Batched events") is the reference; a change to any
 * layout here is a new version (the in-process sink's files have a version of their own).
 */
#ifndef CLOSURE_BATCH_H
#define CLOSURE_BATCH_H

#include <stdint.h>

#define CLOSURE_BATCH_MAGIC   0xc1b47c00u
#define CLOSURE_BATCH_VERSION 4u
#define CLOSURE_BATCH_RECORDS 256 /* records per thread buffer */

/* One operation: 56 bytes. op is the probe's index in CLOSURE_PROBE_LIST (closure_probes.h: init 0
 * ... destroy 13). */
struct closure_batch_record {
	uint64_t ts;	/* CLOCK_MONOTONIC, ns */
	uint64_t ip;	/* the call site as a return address (0: none), as the probes' arg3 */
	uint64_t cl;	/* arg0 */
	uint64_t x4;	/* the probe's arg4 (0 when it has none) */
	uint64_t x5;	/* arg5 */
	uint32_t count; /* arg1: the count after */
	uint32_t flags; /* arg2: the flags after */
	uint32_t seq;	/* per-thread sequence number (low 32 bits) */
	uint8_t op;
	uint8_t x6; /* arg6 */
	uint16_t pad;
};

/*
 * Not an operation: a name record (op CLOSURE_BATCH_OP_NAME, past every probe's index, so that a
 * decoder that does not know it skips it). The same 56 bytes and sequence numbers as an
 * operation's record: a thread's name (id: its thread id), given when the thread claims a buffer,
 * or a workqueue's (id: the struct workqueue *, as run and continue_at's wq argument), given by
 * workqueue_create and by each of its threads when it claims a buffer. The name is the first
 * CLOSURE_BATCH_NAME_MAX bytes, NUL-padded, not terminated when it fills them.
 */
#define CLOSURE_BATCH_OP_NAME  0xffu
#define CLOSURE_BATCH_NAME_MAX 32
#define CLOSURE_NAME_THREAD    1u
#define CLOSURE_NAME_WORKQUEUE 2u
struct closure_batch_name {
	uint64_t ts;
	char name[CLOSURE_BATCH_NAME_MAX];
	uint64_t id;
	uint32_t seq;
	uint8_t op;   /* CLOSURE_BATCH_OP_NAME */
	uint8_t kind; /* CLOSURE_NAME_THREAD or CLOSURE_NAME_WORKQUEUE */
	uint16_t pad;
};

/* A thread's buffer; the registry lists every one, free ones included (owner 0). */
struct closure_batch_buf {
	struct closure_batch_buf *next;
	uint64_t base;	   /* sequence number of rec[0] */
	uint64_t first_ts; /* ts of rec[0] */
	uint32_t owner;	   /* 1 while a thread owns it; 2 retired (never claimed again) */
	uint32_t tid;
	uint32_t n;	  /* records reserved (may briefly exceed CLOSURE_BATCH_RECORDS) */
	uint32_t depth;	  /* appends in progress in this thread (a signal handler nests) */
	uint32_t dropped; /* records a nested append found no room for, since the last handover */
	uint32_t sink;	  /* the in-process sink's K of this buffer (its file), else 0 */
	struct closure_batch_record rec[CLOSURE_BATCH_RECORDS];
};

/* One per libclosure in a process; its address is the batch probe's arg0. */
struct closure_batch_registry {
	uint32_t magic; /* CLOSURE_BATCH_MAGIC */
	uint32_t version;
	uint32_t record_size;	 /* sizeof(struct closure_batch_record) */
	uint32_t buffer_records; /* CLOSURE_BATCH_RECORDS */
	struct closure_batch_buf *head;
	uint64_t handed;     /* records handed over so far (the batch probe's arg4 is the total) */
	uint64_t consumed;   /* written by a lossless recorder: the handed total it has received */
	uint64_t wait_limit; /* written by a lossless recorder: records in flight before a wait */
	/*
	 * Version 2. Written by a recorder that reads the buffers in place while recording: until
	 * this time (CLOCK_MONOTONIC ns) a buffer is handed over only when full, at thread exit
	 * and at process exit, never for its age or before a thread blocks.
	 */
	uint64_t polled_until;
	/*
	 * Version 3: whole trees or nothing. A recorder sets session (never 0 while it records;
	 * a new value for each recording, and 0 again when it stops) and sample_every: 0 or 1
	 * every tree, N one root closure in N with all its descendants, CLOSURE_SAMPLE_NONE no
	 * new tree (trees already recorded stay complete). The library decides at the init of
	 * each root while session is set, counts the roots in trees and those left out in
	 * trees_left_out; a closure keeps its parent's decision.
	 */
	uint32_t sample_every;
	uint8_t session;
	uint8_t pad3[3];
	uint64_t trees;
	uint64_t trees_left_out;
	/*
	 * Version 4: written by a recorder that never makes the process wait (record -p, top):
	 * while more than behind_limit records are handed over and not consumed (the recorder
	 * writes consumed as it receives batches), the init of a root leaves its tree out as
	 * sampling does, counted in trees_left_out. 0: never. A recorder that falls behind so
	 * loses whole new trees, never records of a tree it records.
	 */
	uint64_t behind_limit;
};

#define CLOSURE_SAMPLE_NONE 0xffffffffu /* sample_every: start no new recorded tree */
/* The environment of a launched command: CLOSURETRACE_SAMPLE=N (N >= 2, or "none") makes the
 * library set sample_every to N and session to 1 at start-up, before its first closure. */
#define CLOSURE_SAMPLE_ENV "CLOSURETRACE_SAMPLE"

/*
 * The in-process sink (version 2, its own): CLOSURETRACE_SINK=DIR in the environment at start-up
 * makes libclosure write, for each process image (an exec starts a new one), files named by the
 * process id and the image's start time T (CLOCK_MONOTONIC ns, decimal) that outlive the process:
 *
 *   DIR/PID.T     the stream: a struct closure_sink_file, then chunks appended, each a header and
 *                 size bytes of payload
 *   DIR/PID.T.K   thread buffer number K (1, 2, ...): a struct closure_sink_file, then the
 *                 struct closure_batch_buf itself, mapped shared, so that what a killed process
 *                 had not handed over is still there
 */
#define CLOSURE_SINK_ENV     "CLOSURETRACE_SINK"
#define CLOSURE_SINK_VERSION 2u
enum closure_sink_kind {
	CLOSURE_SINK_START = 1,	 /* u64 ts (T), then the executable's path (no NUL) */
	CLOSURE_SINK_MODULE = 2, /* u64 load bias, then the object's path (no NUL) */
	CLOSURE_SINK_BATCH = 3,	 /* struct closure_sink_batch, then n records */
	CLOSURE_SINK_END = 4,	 /* u64 ts: the image ran its exit handlers */
	CLOSURE_SINK_STREAM = 5, /* a file: the stream */
	CLOSURE_SINK_BUFFER = 6, /* a file: a thread buffer */
};

/* The first 64 bytes of every sink file. The library updates the counters through a mapping. */
struct closure_sink_file {
	uint32_t magic;	  /* CLOSURE_BATCH_MAGIC */
	uint16_t kind;	  /* CLOSURE_SINK_STREAM or CLOSURE_SINK_BUFFER */
	uint16_t version; /* CLOSURE_SINK_VERSION */
	uint32_t pid;
	uint32_t index;	  /* BUFFER: K */
	uint64_t image;	  /* T */
	uint64_t lost;	  /* STREAM: records not kept (a write failed; no buffer could be made) */
	uint32_t failed;  /* STREAM: a write failed: the stream ends there, maybe inside a chunk */
	uint32_t buffers; /* STREAM: buffer files made */
	uint32_t exited;  /* STREAM: 1 once the image ran its exit handlers (END may not fit) */
	uint8_t reserved[20];
};

struct closure_sink_chunk {
	uint32_t magic; /* CLOSURE_BATCH_MAGIC */
	uint16_t kind;
	uint16_t version; /* CLOSURE_SINK_VERSION */
	uint32_t size;	  /* payload bytes after this header */
	uint32_t pid;
};

struct closure_sink_batch {
	uint32_t tid;
	uint32_t n;
	uint32_t dropped;
	uint32_t buf; /* the buffer's K (0: a buffer outside the sink's files) */
};

#endif
