/*
 * The recorder's inside (recorder.h is its outside): the state its parts share, and each part's
 * functions. One file per concern, each calling only those below it (no circle):
 *   session_life.c  load the BPF programs, take each ring-buffer record (the dispatch), finish,
 *                   close: the top, which drives the rest
 *   event_loop.c    the wait for records and the end, signals, timeouts
 *   session_batch.c, batch_proc.c, batch_decode.c: batches; drain.c, spool.c: the drain thread;
 *                   ring_pos.c: how far behind the ring buffer's reader is
 *   snapshot.c      the closures alive at attach, written as inits
 *   emit.c          one event into the trace and to the consumer (every path ends there)
 *   snapshot_late.c closures first seen mid-life, read from the process and begun by an init
 *   snapshot_keep.c the snapshot's closures, and the later inits they keep out
 *   addresses.c     the process's objects and the call-site addresses written as sym records
 *   procset.c       the set of processes a launched command became (fork and exec following)
 *   attach.c        probe discovery and attachment (uprobe_multi, or libbpf's per-site way)
 *   detach.c        the links let go, in threads, or by the guard once the command ended
 *   session.c       the session's clock and BPF statistics, below them all
 */
#ifndef CLOSURETRACE_SESSION_H
#define CLOSURETRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hashmap.h"
#include "objects.h"
#include "recorder.h"
#include "usdt_multi.h"

struct closuretrace_bpf;
struct ring_buffer;
struct bpf_link;
struct symbols;
struct ct_event;
struct batch_decoder;
struct batch_process;
struct drain;
struct late_reader;

/* Where the event loop stands: running, or ending and waiting for the command to go. */
enum session_phase {
	PHASE_RUN,
	PHASE_TERM, /* a stop signal, --duration or --timeout: the command was sent SIGTERM */
	PHASE_KILL, /* the grace period passed (--timeout) or a second signal: SIGKILL sent */
	PHASE_DONE,
};

/*
 * The links that hold the probes (attach.c makes them, detach.c lets them go). Per process
 * (session_procs.per_process), each uprobe_multi link names one traced process, and every
 * process in pids has one link for each file in files.
 */
struct session_attach {
	struct usdt_multi multi; /* uprobe_multi attachment (argument specs) */
	bool use_libbpf;	 /* the kernel has no uprobe_multi: libbpf's attach_usdt */
	bool every_process;	 /* not per process, even where it works (CLOSURETRACE_ATTACH) */
	int *link_fds;		 /* uprobe_multi links */
	pid_t *link_pids;	 /* ... the process each names (0: every one; the loader's) */
	size_t n_link_fds;
	struct bpf_link **links; /* libbpf's links */
	size_t n_links;
	struct detacher *detacher; /* the links being let go (detach.c) */
	struct file_id *files;	   /* files whose probes are attached */
	int *file_fds;		   /* per process: each, kept open for the processes to come */
	size_t n_files;
	pid_t *pids; /* per process: the traced processes, which the links name */
	size_t n_pids;
	unsigned probes; /* probe names attached, over every object */
};

/* The traced processes' objects and the code addresses written as sym records (addresses.c). */
struct session_addresses {
	struct objects objects;
	struct symbols *syms;
	struct hashmap seen;	  /* the addresses already symbolized or pending (a set) */
	uint64_t modules_refused; /* closure:module records naming no object mapped */
	struct maps_snapshot module_maps; /* the maps module records were last checked against */
	uint64_t *pending;		  /* addresses in no known object yet */
	size_t n_pending, pending_cap;
};

/* The batched transport (session_batch.c, batch_proc.c, drain.c). */
struct session_batches {
	bool on;	    /* a libclosure of the process batches: its batch probe is attached */
	bool exec_syscalls; /* no sched_prepare_exec (Linux 6.10): exec drained at the syscalls */
	struct batch_decoder *decoder;
	struct batch_process *procs;
	size_t n_procs;
	uint64_t dropped;	 /* records the processes say their library dropped, believed */
	uint64_t claims_refused; /* ... and beyond what their CPU time allows: refused */
	uint64_t gaps_lost;	 /* sequence numbers given up as lost, believed (the same rule) */
	struct hashmap tids;	 /* (pid, tid) of threads seen handing their own buffer over */
	uint64_t tid_refused;	 /* records refused: they named no thread of their process */
	uint64_t polled;	 /* when idle threads' buffers were last read */
	/* The ring buffer's consumer and producer positions (read-only mapping), and where the
	 * producer was after the poll of the sweep under way. */
	const volatile uint64_t *ring_pos;
	uint64_t sweep_until;
};

/* -p: the closures the snapshot wrote (snapshot.c), by address; snapshot_keep.c reads them. */
struct snapshot_closure {
	uint64_t addr;
	uint64_t init_ns; /* when it was initialised: events before are earlier lives' */
	bool done;	  /* its own init or its finish came: later ones are other lives' */
};
struct session_snapshot {
	struct snapshot_closure *v;
	size_t n;
	/*
	 * When the live list had been read (0: no snapshot), and what snapshot_keep learned of the
	 * addresses before then: inited since the attach, or a closure from before it that the
	 * snapshot did not see (left out, counted in missed).
	 */
	uint64_t read_ns;
	struct hashmap window;
	uint64_t missed;
	/* The closures known alive, and those first seen mid-life read (snapshot_late.h): NULL
	 * without -p, or when the process's closures cannot be read, unread_why then saying why
	 * (NULL for a process that is gone). */
	struct late_reader *late;
	const char *unread_why;
};

/* Where the event loop stands and its clocks (event_loop.c). */
struct session_loop {
	enum session_phase phase;
	enum recorder_end end;
	int stop_signal; /* the first stop signal received, 0 when none */
	int write_errno; /* RECORDER_WRITE: why the trace could not be written */
	int sigfd, epfd;
	bool quiet; /* no live status line (asked, or not a terminal of our own) */
	/* session_poll's reading stops here (0: read all), so that a producer faster than us still
	 * leaves time for frames, signals and clocks; bytes read since the clock was last read.
	 */
	uint64_t read_until_ns;
	uint32_t read_since_clock;
	bool read_behind; /* the last read stopped there: records are left to read */
	uint64_t begin_ns, phase_ns, last_scan, last_status, last_events;
	uint64_t last_flush; /* when the trace was last flushed */
	uint64_t stopped_ns; /* when the recording stopped (PHASE_DONE), 0 before */
};

/* The processes traced: one, or a launched command and what it forks and execs (procset.c). */
struct session_procs {
	bool launched;		/* the process is our child: forward signals to it */
	bool stop_on_load;	/* stop the process at each loader change until attached */
	bool follow;		/* launched only: trace the processes it forks and what they exec */
	bool per_process;	/* follow mode: the probes attached per process (docs/design.md) */
	struct hashmap tid_pid; /* follow mode: tid -> pid (uint32_t), a cache of the BPF map */
	int pidfd;
	int guard;	  /* the launched command's guard (check_guard.h), or -1 */
	bool root_exited; /* the launched command's first process has exited */
	bool init_pidns;  /* we live in the first pid namespace */
};

/* What reached the trace and the consumer (emit.c). */
struct session_output {
	FILE *file; /* NULL: events go to the consumer alone */
	uint64_t start_ns;
	uint64_t events;
	int64_t live; /* closures initialised and not finished (stack closures excluded) */
	/*
	 * The stop's cut (CLOCK_MONOTONIC ns; 0 until the stop): the threads of a process still
	 * running are drained one after another, so a record made after the cut by a thread read
	 * late would come without the earlier records of a thread read early (a new life's init
	 * before the old life's finish). Events after the cut are left out, counted in after_cut.
	 */
	uint64_t cut_ns, after_cut;
	/* At the stop: the root closures decided while sampling and those left out, over every
	 * process (trees_counted: some libclosure counted them, version 3 on). */
	bool trees_counted;
	uint64_t trees, trees_left_out;
};

/* A recording: the parts above, each owned by its file, and what they all read. */
struct session {
	const struct recorder_opts *opts; /* the caller's, kept for the whole recording */
	struct closuretrace_bpf *skel;
	struct ring_buffer *rb;
	struct drain *drain; /* the thread that empties the ring buffer (drain.h) */
	pid_t pid;
	const char *exe; /* the process's executable: maps are read only once it runs it */
	bool closing;	 /* session_close: only exec records are still handled */
	bool abandoned;	 /* recorder_abandon: nothing more is decoded or emitted */
	struct session_attach attach;
	struct session_addresses addr;
	struct session_batches batches;
	struct session_snapshot snap;
	struct session_loop loop;
	struct session_procs procs;
	struct session_output out;
};

/* session.c (and recorder_now_ns, recorder.h) */
uint64_t session_read_stat(struct session *s, uint32_t slot);

/* session_life.c */
/* o: the caller's options, borrowed until session_close. 0, or -1 out of memory. */
int session_init(struct session *s, pid_t pid, const struct recorder_opts *o);
/* Opens and loads the BPF programs with a ring buffer of opts->buffer_size bytes. 0 or -errno. */
int session_load(struct session *s);
/* Reads the rest, resolves what is still pending; returns the events the kernel could not
 * hand over (and warns when module records were lost too). */
uint64_t session_finish(struct session *s);
void session_close(struct session *s);
/* A record of the ring buffer, by its kind (the drain thread queued it, or read directly). */
void session_take_record(struct session *s, const void *data, size_t size);

/* attach.c */
/* Whether pid has exited: gone, or a zombie (which kill(pid, 0) and pidfd_open still accept). */
bool session_process_gone(pid_t pid);
/* Every closure probe of the ELF file at path (once per file): probe names attached, or -errno. */
int session_attach_path(struct session *s, const char *path);
/* Every object with closure probes that the executable at path loads: as above. */
int session_attach_program(struct session *s, const char *path);
/* Watches the loader of exe (its _dl_debug_state): a dlopen is seen at once. 0 or -errno. */
int session_watch_loader(struct session *s, const char *exe);
int session_add_link(struct session *s, struct bpf_link *link);
/* Whether path's libclosure batches: decides s->batching before anything is attached. */
void session_detect_batch(struct session *s, const char *path);
/* Per process: pid is traced, its links made for every file attached (the files to come too). */
void session_attach_process(struct session *s, pid_t pid);
/* Per process: pid is traced no more (it ended, or the links name a task gone); its links go. */
void session_release_process(struct session *s, pid_t pid);
/* The files kept open for the processes to come, closed. */
void session_attach_free(struct session *s);

/* addresses.c */
/* Reads the process's maps, learns new objects and attaches those with probes. */
void session_scan(struct session *s);
/*
 * A closure:module record: an object of the process at its bias, from thread tid of user uid at
 * time ts (BPF: believed only when the process maps it, or once it is gone when its user may read
 * it), or from the in-process sink (tid 0: read as the process's user, after it).
 */
struct session_module {
	const char *path;
	uint64_t base, ts;
	uint32_t tid, uid;
};
void session_on_module(struct session *s, const struct session_module *m);
/* addr is written as a sym record once (now, or when its object is known). */
void session_note_address(struct session *s, uint64_t addr);
void session_retry_pending(struct session *s);

/* procset.c */
/* Before load: the BPF follow settings (or the follow programs left unloaded). */
int procset_setup(struct session *s);
/* After load: the fork/exec/exit tracepoints. */
int procset_attach(struct session *s);
/* The process of a thread (0 outside follow mode). */
uint32_t procset_process_of(struct session *s, uint32_t tid);
/* A traced process exec'ed (a CT_EXEC record), forked one (CT_FORK) or ended (CT_EXIT). */
struct ct_proc_event;
void procset_on_record(struct session *s, const struct ct_proc_event *e);
/* Whether some process of the command still runs (follow mode; else: the first one). */
bool procset_alive(struct session *s);
/* Sends sig to every process of the command (and SIGCONT, for one held at an exec). */
void procset_signal(struct session *s, int sig);
/* The processes of the command still running, at most max of them into pids; how many. */
size_t procset_list(struct session *s, pid_t *pids, size_t max);
/* SIGCONT the first process through its pidfd (the pid may be reused, the pidfd cannot). */
void procset_continue(struct session *s);

/* detach.c */
/* Lets every link attached so far go, in threads (the probes fire no more). */
void session_detach_start(struct session *s);
/* The same once no traced process is left: the uprobe links go to the guard, which waits. */
void session_detach_behind(struct session *s);
/* Until the links session_detach_start let go are gone. */
void session_detach_wait(struct session *s);
/* Uprobe links that nothing can fire any more (their process ended), taken: let go unwaited. */
void session_detach_links(struct session *s, int *fds, size_t n);

/* event_loop.c */
int session_start(struct session *s, uint64_t start_ns);
/* Waits up to timeout_ms for records and the end; RECORDER_RUNNING until it has come. */
int session_poll(struct session *s, int timeout_ms);
/* A stop as a signal would make it (recorder_request_stop). */
void session_request_stop(struct session *s);

/* emit.c */
/* The single way into the trace of a decoded operation (any transport). */
void session_emit(struct session *s, const struct ct_event *e);
/* The same, the process known (the in-process sink, which has no BPF map of threads). */
void session_emit_pid(struct session *s, const struct ct_event *e, uint32_t pid);
/* A ring-buffer event with the user stack that follows it in its record (bytes of it; 0: none,
 * bpf/event.h CT_STACK_MAX). */
void session_emit_frames(struct session *s, const struct ct_event *e, const void *stack,
			 size_t bytes);

#endif
