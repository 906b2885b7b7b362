/*
 * A recording session: load the BPF programs, attach them to every closure probe of the traced
 * process, consume the ring buffer into a trace until the process exits, a signal or the
 * duration ends it. What `record` (and later `check`) share.
 */
#ifndef CLOSURETRACE_SESSION_H
#define CLOSURETRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "objects.h"
#include "usdt_multi.h"

struct closuretrace_bpf;
struct ring_buffer;
struct bpf_link;
struct symbols;
struct ct_event;
struct batch_decoder;
struct batch_process;

enum session_end { SESSION_EXIT, SESSION_SIGNAL, SESSION_DURATION };

struct session {
	struct closuretrace_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_multi multi; /* uprobe_multi attachment (argument specs) */
	bool use_libbpf;	 /* the kernel has no uprobe_multi: libbpf's attach_usdt */
	int *link_fds;		 /* uprobe_multi links */
	size_t n_link_fds;
	struct bpf_link **links; /* libbpf's links */
	size_t n_links;
	struct file_id *attached; /* files whose probes are attached */
	size_t n_attached;

	pid_t pid;
	const char *exe;   /* the process's executable: maps are read only once it runs it */
	bool launched;	   /* the process is our child: forward signals to it */
	bool verbose;	   /* say on stderr what was attached */
	bool stop_on_load; /* stop the process at each loader change until attached (launched) */
	bool follow;	   /* launched only: trace the processes it forks and what they exec */
	bool quiet;	   /* no live status line, even on a terminal (check) */
	unsigned probes;   /* probe names attached, over every object */
	bool closing;	   /* session_close: only exec records are still handled */
	uint32_t *tid_pid; /* follow mode: open-addressing pairs tid, pid (cache of the BPF map) */
	size_t tid_pid_cap, tid_pid_n;
	int pidfd, sigfd, epfd;

	FILE *out;
	uint64_t start_ns;
	struct objects objects;
	struct symbols *syms;
	uint64_t *seen; /* open-addressing set of addresses already symbolized or pending */
	size_t seen_cap, seen_n;
	uint64_t *pending; /* addresses in no known object yet */
	size_t n_pending, pending_cap;

	/* The batched transport (session_batch.h); per_op: attach the per-operation probes. */
	bool per_op;
	size_t buffer_size;
	struct batch_decoder *batch;
	struct batch_process *batch_procs;
	size_t n_batch_procs;
	uint64_t batch_dropped;
	bool batching; /* a libclosure of the process batches: its batch probe is attached */

	uint64_t events;
	int64_t live; /* closures initialised and not finished (stack closures excluded) */
	int stop_signal;
};

/* Zeroes s for pid and opens the symbolizer. 0, or -1. */
int session_init(struct session *s, pid_t pid, FILE *out);

/* Opens and loads the BPF programs with a ring buffer of buffer_size bytes. 0 or -errno. */
int session_load(struct session *s, size_t buffer_size);

/*
 * Attaches every closure probe found in the ELF file at path (once per path). Returns how many
 * probes were attached (0 when it has none), or -errno.
 */
int session_attach_path(struct session *s, const char *path);

/*
 * Attaches every object with closure probes that the executable at path loads (itself and its
 * libraries, as the dynamic loader would find them). Returns the number of probes attached, or
 * the last -errno when none could be.
 */
int session_attach_program(struct session *s, const char *path);

/*
 * Watches the dynamic loader of the executable exe (its _dl_debug_state), so that a library
 * loaded later is attached at once. 0, or -errno (a static executable has no loader: 0).
 */
int session_watch_loader(struct session *s, const char *exe);

/* Reads the process's maps, learns new objects and attaches those with probes. */
void session_scan(struct session *s);

/* Opens the pidfd and the signal fd (blocking SIGINT and SIGTERM). 0 or -errno. */
int session_start(struct session *s, uint64_t start_ns);

/* Consumes events until the process exits, a signal arrives or duration_ns passes (0: none). */
enum session_end session_run(struct session *s, uint64_t duration_ns);

/*
 * Resolves what is still pending and returns the events the kernel could not hand over (and
 * warns when module records were lost too).
 */
uint64_t session_finish(struct session *s);

void session_close(struct session *s);

uint64_t session_now_ns(void);

/* An object of the process at load bias base (a module record): symbols, trace, probes. */
void session_module(struct session *s, const char *path, uint64_t base);

/* Resolves the addresses still pending (their objects were learnt since). */
void session_resolve_pending(struct session *s);

/* One event into the trace (from a probe hit or a decoded batch); pid as trace_write_event's. */
void session_event(struct session *s, const struct ct_event *e, uint32_t pid);

#endif
