/*
 * The recorder that record, check (and top) share: an opaque object with a verb API, as retsnoop's
 * mass_attacher. The caller fills struct recorder_opts, then
 *
 *   r = recorder_new(&opts, &status);   checks, starts the command held, loads, attaches
 *   recorder_start(r, out);             writes the trace's header, lets the command run
 *   while (recorder_poll(r, ms) == RECORDER_RUNNING) ...;
 *   recorder_stop(r, &result);          reads the rest, writes the trailer
 *   recorder_free(r);
 *
 * or recorder_run(&opts, &result) for all of it. Every message for the user is printed here, once.
 */
#ifndef CLOSURETRACE_RECORDER_H
#define CLOSURETRACE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trace_format.h"

struct recorder;
struct ct_event;
struct sym_info;
struct trace_end;

/* Why the recording ended: the trailer's "reason". */
enum recorder_end {
	RECORDER_EXIT = TRACE_END_EXIT, /* the process (with -- CMD: every process of it) exited */
	RECORDER_SIGNAL = TRACE_END_SIGNAL,	/* SIGINT or SIGTERM to the recorder */
	RECORDER_DURATION = TRACE_END_DURATION, /* opts.duration_ns passed */
	RECORDER_TIMEOUT = TRACE_END_TIMEOUT,	/* opts.timeout_ns passed: the command was ended */
	RECORDER_WRITE =
		TRACE_END_WRITE, /* the trace could not be written (a full disk): at once */
};

/*
 * A live consumer of what the trace holds (top, check): the recorder hands it each record as it
 * hands the writer, whether or not a trace is written. Every callback is optional; ctx is
 * recorder_opts.consumer_ctx.
 */
struct recorder_consumer {
	/* The header: event times count from start_ns (pid: the process recorded). */
	void (*start)(void *ctx, pid_t pid, const char *exe, uint64_t start_ns);
	/* Each operation, in the order the writer gets it (pid: its process, 0 when unknown). */
	void (*event)(void *ctx, const struct ct_event *e, uint32_t pid);
	/* --stacks: the user stack of the operation event() gets next (n > 0 addresses, innermost
	 * first, each the calling instruction as e->ip is; borrowed for the call). */
	void (*frames)(void *ctx, const struct ct_event *e, uint32_t pid, const uint64_t *ips,
		       unsigned n);
	/* A code address resolved, once, as its sym record says it (s borrowed for the call). */
	void (*sym)(void *ctx, uint64_t addr, const struct sym_info *s);
	/* A thread's or workqueue's name (kind: CLOSURE_NAME_*), as its record says it. */
	void (*name)(void *ctx, unsigned kind, uint32_t pid, uint64_t id, const char *name);
	/* The trailer, as the end record says it (borrowed for the call). */
	void (*end)(void *ctx, const struct trace_end *end);
};

struct recorder_opts {
	pid_t pid;	   /* attach to this running process; or */
	char *const *argv; /* start this command, held until attached; its children are followed */
	size_t buffer_size;
	uint64_t duration_ns;  /* stop after this long; a launched command gets SIGTERM (0: none) */
	uint64_t timeout_ns;   /* launched: SIGTERM after this long, SIGKILL grace_ns later */
	uint64_t grace_ns;     /* default 2 s */
	uint64_t stop_wait_ns; /* after a stop signal, wait this long for the command to end
				  (0: until it ends; a second signal kills it) */
	bool verbose;	       /* say on stderr what is attached */
	bool quiet;	       /* no live status line, even on a terminal */
	bool stdout_to_stderr; /* the command's standard output goes to our standard error */
	int command_stderr;    /* the command's standard error when ours is elsewhere (check
				  --log-file): a descriptor > 0, or -1 closed; 0: ours */
	bool per_op;	       /* the per-operation probes even when libclosure offers batches */
	unsigned stacks; /* --stacks N: N user-stack frames at each init and get (0: none; at most
			    RECORDER_STACKS_MAX); implies per_op */
	bool no_bpf;	       /* a command: the in-process sink even when BPF is permitted */
	bool cold_ring; /* leave the ring buffer's pages to their first use (a run timed whole) */
	uint32_t sample_every; /* --sample N: one root closure in N, whole (0: every one) */
	const struct recorder_consumer *consumer; /* NULL: none */
	void *consumer_ctx;
};

#define RECORDER_MAX_RUNNING 8
#define RECORDER_STACKS_MAX  64 /* bpf/event.h CT_STACK_MAX */

struct recorder_result {
	uint64_t events, lost, duration_ns;
	enum recorder_end end;
	int exit_code;	  /* the launched command's exit status; -1 when none */
	int signal;	  /* the signal that killed it; 0 when none */
	bool not_started; /* it ended (was killed) before the recorder let it run */
	int stop_signal;  /* the signal that stopped the recording; 0 when none */
	int write_errno;  /* RECORDER_WRITE: why */
	bool probes;	  /* some process had closure probes attached */
	bool sink;	  /* the in-process sink carried the events (no BPF) */
	pid_t pid;	  /* the process recorded (the command's first) */
	size_t n_running; /* processes of the command still running at the end */
	pid_t running[RECORDER_MAX_RUNNING];
};

enum { RECORDER_RUNNING = -1 };

/* NULL after printing why, with *status the exit status to end with (2 or 3). */
struct recorder *recorder_new(const struct recorder_opts *o, int *status);

/*
 * Writes the trace's header to out (borrowed, the caller closes it; NULL: no trace) and lets the
 * command run. temp_path (or NULL) is removed should the recorder die. 0, or an exit status
 * after printing why. Nothing is written before this: the
 * caller opens the output once the recorder is ready.
 */
int recorder_start(struct recorder *r, FILE *out, const char *temp_path);

/* Handles what arrives within timeout_ms: RECORDER_RUNNING, or (ended) 0. */
int recorder_poll(struct recorder *r, int timeout_ms);

/* Ends the recording as a stop signal would (a launched command gets SIGTERM). */
void recorder_request_stop(struct recorder *r);

/*
 * Nothing read from now on is wanted (top has quit): the stop still leaves the processes as it
 * found them, but decodes and hands over nothing more, so that quitting a view of a busy process
 * does not wait for the backlog it was behind by.
 */
void recorder_abandon(struct recorder *r);

/* Reads what is left, writes the trailer, fills *res. */
void recorder_stop(struct recorder *r, struct recorder_result *res);

/* Detaches and frees; a launched command still held is ended, one still running left alone. */
void recorder_free(struct recorder *r);

/* Opens the trace once the recorder is ready; NULL after saying why. See recorder_start. */
typedef FILE *(*recorder_open_fn)(void *ctx, const char **temp_path);

/* All of the above: -1 when the recording was made (see *res), else an exit status. open_out
 * NULL: no trace is written (the consumer alone, check). */
int recorder_run(const struct recorder_opts *o, recorder_open_fn open_out, void *ctx,
		 struct recorder_result *res);

/*
 * What record, check, list, ps and the recorder say when the environment refuses (refusals.c), so
 * that all say the same thing: each prints one line saying what to do and returns EXIT_ENVIRONMENT.
 */
int permission_error(void);	       /* no permission to use BPF and uprobes */
int no_process_error(pid_t pid);       /* no process with that pid */
int no_probes_error(const char *what); /* what (a binary, a process) has no closure probes */
int no_probes_in_process(pid_t pid);   /* the same, said with the process's program name */
int load_error(int err);	       /* the BPF programs would not load (err: -errno) */

/* The recorder's clock (CLOCK_MONOTONIC ns), which the trace's times count on. */
uint64_t recorder_now_ns(void);

#endif
