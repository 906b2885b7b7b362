/*
 * The recorder's side of a traced process's batch registry (lib/include/closure_batch.h): read
 * with process_vm_readv while recording (a poll takes the records an idle thread holds) and at
 * stop (a drain takes what is still buffered), written with process_vm_writev to make the library
 * wait for the recorder (lossless mode). Reads never write into the process.
 */
#ifndef CLOSURETRACE_BATCH_PROC_H
#define CLOSURETRACE_BATCH_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "batch_decode.h"

/* The name under which libclosure exports its registry (docs/probes.md). */
#define BATCH_REGISTRY_SYMBOL "closure_batch_registry_public"

/* The most buffers a drain or poll reads (a registry list is only ever appended to). */
#define BATCH_DRAIN_MAX_BUFFERS 65536

/* A buffer as a poll last saw it. */
struct batch_poll_buf {
	uint64_t addr;
	uint64_t taken; /* base << 9 | n of the records last taken */
	uint32_t tid;	/* its owner thread (0: free) */
};

/* Called by a poll for each buffer of pid that has a new owner: its thread, its records. */
typedef void batch_owner_fn(void *ctx, pid_t pid, uint64_t registry, uint32_t tid,
			    uint64_t records);

/* What a poll knows of a process's buffers between polls. */
struct batch_poll {
	uint64_t head; /* the registry's list head when last read */
	struct batch_poll_buf *bufs;
	size_t n, cap;
	batch_owner_fn *on_owner; /* NULL: none */
	void *ctx;
	/* Scratch kept between polls: IOV_MAX buffer heads and their iovecs, two buffer copies. */
	struct iovec *local, *remote;
	char *heads;
	struct closure_batch_buf *copies;
};

/*
 * Feeds every record still in the buffers of process pid (image image), whose registry is at
 * registry, to d. Returns the number of new records, or -errno (the process is gone: -ESRCH).
 */
long batch_drain(struct batch_decoder *d, pid_t pid, uint64_t registry, uint32_t image);

/*
 * Feeds to d the records of every buffer of pid whose oldest record is older than
 * idle_before_ns (CLOCK_MONOTONIC): threads that sit idle with records buffered. With
 * polled_until (else 0), first writes it into the registry (version 2 on): the library then
 * hands buffers over only when full until that time, since the polls take the rest. Returns the
 * number of new records, or -errno.
 */
long batch_poll(struct batch_poll *p, struct batch_decoder *d, pid_t pid, uint64_t registry,
		uint32_t image, uint64_t idle_before_ns, uint64_t polled_until);

/* Withdraws polled_until (the library hands over by age again at once). 0 or -errno. */
int batch_stop_polling(pid_t pid, uint64_t registry);

void batch_poll_free(struct batch_poll *p);

/*
 * Whether a struct closure_batch_registry (version 1 to CLOSURE_BATCH_VERSION) is at registry in
 * pid: 0, -EPROTO (not one: another version, or no registry there), or -errno.
 */
int batch_registry_check(pid_t pid, uint64_t registry);

/* Tells the library of pid that the recorder received everything up to handed. 0 or -errno. */
int batch_ack(pid_t pid, uint64_t registry, uint64_t handed);

/* Lossless mode: the library waits when more than limit records are handed and not acked. */
int batch_set_wait_limit(pid_t pid, uint64_t registry, uint64_t limit);

/*
 * A recorder that never makes the process wait (-p): past limit records handed and not acked,
 * the library leaves new trees out (version 4; -EPROTO before). 0 or -errno.
 */
int batch_set_behind_limit(pid_t pid, uint64_t registry, uint64_t limit);

/* The registry's handed total (every version). 0 or -errno. */
int batch_handed(pid_t pid, uint64_t registry, uint64_t *handed);

/* A registry's sampling (version 3, lib/include/closure_batch.h; docs/probes.md). */
struct batch_sampling {
	uint32_t every; /* 0 or 1: every tree; N: one root in N; CLOSURE_SAMPLE_NONE: none */
	uint8_t session;
	uint64_t trees, trees_left_out;
};
/* 0, -EPROTO for a registry older than version 3, or -errno. */
int batch_sampling_read(pid_t pid, uint64_t registry, struct batch_sampling *out);
/* Sets sample_every and session (the caller read the version). 0 or -errno. */
int batch_sampling_write(pid_t pid, uint64_t registry, uint32_t every, uint8_t session);

#endif
