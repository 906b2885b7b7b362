/*
 * The model: every closure's life rebuilt from a trace. An init at an address starts a new life
 * (ADDR#N is the Nth life at ADDR), so reused addresses and stack closures stay apart. Counts come
 * from the events themselves ("remaining" after each operation), and a small reorder window puts
 * events from different CPUs back into time order.
 */
#ifndef CLOSURETRACE_MODEL_H
#define CLOSURETRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

enum model_state {
	MODEL_RUNNING,	  /* somebody owns the running reference */
	MODEL_CONTINUING, /* gave it up: fn runs (or it finishes, fn 0) when the others are put */
	MODEL_SYNCING,	  /* inside closure_sync, sleeping until the count is back to 1 */
	MODEL_FINISHED,
	MODEL_DESTROYED, /* finished and its destructor ran */
	MODEL_UNKNOWN,	 /* first seen mid-life, not running: what it waits for is not known */
};

/* References taken and put at one call site, on one closure (or summed over a kind). */
struct model_site {
	uint64_t ip;
	uint32_t taken, put;		 /* get / put and sub, as the events say */
	uint32_t child_taken, child_put; /* of which: a child's init and the put when it finished */
};

/* What leaks.c concludes about an unfinished life (docs/design.md "What a leak is"). */
enum model_verdict {
	VERDICT_NONE,	    /* finished */
	VERDICT_LEAKED,	    /* the process exited: a root cause */
	VERDICT_KEPT_ALIVE, /* only unfinished children (leaked or suspect) hold it */
	VERDICT_IN_FLIGHT,  /* the recording stopped while the process ran: still at work */
	VERDICT_SUSPECT,    /* in flight far longer than the finished closures of its kind */
	VERDICT_LATE,	    /* no init, used after its address's closure finished: set aside */
};

enum blame_kind {
	BLAME_EXCESS_TAKE, /* took more than the finished closures of its kind do */
	BLAME_MISSING_PUT, /* put fewer than the finished closures of its kind do */
	BLAME_UNMATCHED,   /* took references that were never put (nothing to compare with) */
	BLAME_RUNNING,	   /* the running reference was never given up */
	BLAME_WAITLIST,	   /* waits on a waitlist that nobody woke */
};

enum blame_sure { SURE_LOW, SURE_MEDIUM, SURE_HIGH };

struct model_blame {
	uint64_t site;	 /* a call site, or for BLAME_RUNNING a continuation fn */
	double refs;	 /* how many outstanding references this explains */
	double expected; /* per finished closure of the kind (EXCESS_TAKE, MISSING_PUT) */
	double actual;
	enum blame_kind kind;
	bool consistent; /* expected is whole: the finished closures all do the same there */
};

#define MODEL_MAX_BLAMES 4
#define MODEL_OPEN_GETS	 4

struct model_kind;

/*
 * One life. A model holds one of these per closure alive (and per finished one when it keeps
 * them), so it is laid out to be small (issue "scale": memory follows what is alive): the 8-byte
 * fields first, then the 4-byte ones, the flags as bits, and the blames, which only judged lives
 * with a blame need, apart.
 */
struct model_life {
	int64_t pid; /* the event's pid, else the trace header's; 0 when neither names one */
	uint64_t addr;
	uint64_t seq;	   /* creation order */
	uint64_t init_ip;  /* 0 when created before recording */
	uint64_t first_ip; /* without an init: the call site of its first event */
	uint64_t parent_addr;
	struct model_life *parent; /* borrowed; NULL when none or no longer in the model */
	struct model_life *first_child, *last_child, *next_sibling, *prev_sibling;
	struct model_life *next, *prev; /* every life, in creation order */
	int64_t start_ts, end_ts, last_ts;
	int64_t remaining;
	/* current continuation; the first one names the kind (0 for a snapshot's life: its first
	 * continuation came before the recording, and a later one would name a kind it is not) */
	uint64_t fn, wq, first_fn;
	uint64_t running_from; /* init site, or the fn that run handed the running ref */
	uint64_t waitlist, wait_ip, sync_ip;
	uint64_t wake_ip; /* the closure_wake_up that took it off its last waitlist (0: none yet) */
	uint64_t release_ip; /* who let it go (the finish event's ip) */
	uint64_t destructor_fn;
	struct model_site *sites;
	/*
	 * The plain gets not put back, paired with plain puts last in, first out: nopen in all,
	 * the call sites of the last nkept of them (most recent last). leaks.c blames these.
	 */
	uint64_t open_get[MODEL_OPEN_GETS];
	struct model_kind *kind;  /* set when it finished or at the end */
	struct model_fold *folds; /* children folded away (model_fold_finished), by kind */
	unsigned open_children;	  /* children not done (model_fold_finished) */
	unsigned nth;		  /* ADDR#nth */
	unsigned nsites, capsites;
	uint32_t nopen, nkept;
	uint32_t child_puts_due; /* children finished whose put on this life is still to come */
	enum trace_how how;
	unsigned flags : 16; /* TRACE_FLAG_* after the last event */
	enum model_state state : 4;
	bool on_waitlist : 1;
	bool stack : 1, before_recording : 1, synced : 1, finished : 1, reused : 1;
	bool sync_timed_out : 1; /* the last closure_sync returned -ETIME */
	bool sleeping : 1;	 /* a sleeping closure_sync (or closure_return_sync) is under way */
	bool frame_left : 1;	 /* a stack closure that ended holding only its running reference */
	bool destroyed : 1;	 /* ended by closure_debug_destroy (at release_ip) */
	bool no_init : 1; /* with before_recording: an earlier life here had finished, no init since
			   */
	bool snapshot : 1;     /* its init is a snapshot's: alive when the recording began, history
				  unknown */
	bool open_guessed : 1; /* a put came while the open gets were of several sites */
	bool done : 1;	       /* finished, nothing pending, and every child done */
	bool pinned : 1;       /* never folded: it or a closure below it waited or woke */

	/* Filled by leaks_analyze() for unfinished lives. */
	enum model_verdict verdict : 4;
	enum blame_sure sure : 2;
	unsigned nblames : 3;
	bool stuck : 1;
	bool hang_root : 1; /* leaked: the root of a hang (leaks.h, "The root of a hang") */
	unsigned live_children;
	uint64_t waiting_behind; /* hang_root: how many stuck closures wait behind it */
	struct model_life *behind; /* stuck: the first root of a hang it waits behind; borrowed */
	uint64_t hang_quiet_ns;	 /* hang_root: from its last event to the end of the recording */
	uint64_t idle_ns; /* a suspect for its idle process: how long that was idle (else 0) */
	int64_t held_running, held_waitlist, held_children, held_other;
	struct model_blame *blames; /* nblames of them (at most MODEL_MAX_BLAMES); NULL: none */
	const char *sure_why;	    /* static text */
	uint64_t age_ns;	    /* at the end of the recording (not its last event) */
	struct model_kind *peer;    /* the finished closures it is compared with; NULL: none */

	/* Scratch for the presentations. */
	unsigned mark;
	void *node;
};

#define MODEL_EXACT_SAMPLES 64

/* A kind: same init site, same first continuation. Lifetimes of its finished closures. */
struct model_kind {
	uint64_t init_ip, fn;
	uint64_t total, finished, unfinished;
	uint64_t samples[MODEL_EXACT_SAMPLES]; /* exact lifetimes while there are few */
	uint32_t *hist;			       /* log-linear histogram beyond that */
	uint64_t max_ns;
	struct model_site *sites; /* plain references summed over its finished closures */
	unsigned nsites, capsites;
	struct model_kind *next;
};

struct model_sym {
	uint64_t addr;
	char *func, *file; /* as shown (text_visible, trace_text.h) */
	char *file_bytes;  /* the file's name as the trace gives it, when not as shown; else NULL */
	long line;
	size_t root; /* file's source root (source_path.h): its first bytes; MODEL_ROOT_SHARED: the
		      * trace says no compile folder, the one its absolute files share */
};
#define MODEL_ROOT_SHARED ((size_t)-1)

struct model;

/* A model. keep_finished: keep finished lives (graph, explain); report frees them as they finish.
 */
struct model *model_new(bool keep_finished); /* new reference */
void model_free(struct model *m);	     /* frees every life, kind and symbol it handed out */

/*
 * A closure's identity: its process, its address, and which life at that address
 * (docs/design.md "Naming a closure": ADDR, ADDR#N, PID:ADDR#N). pid 0: not given (any process);
 * nth 0: the last life.
 */
struct model_id {
	int64_t pid;
	uint64_t addr;
	unsigned nth;
};

/*
 * Finished closures folded away, for a model that keeps finished lives (graph): once a parent (or
 * the trace's tops) has kept keep done children of a kind, each further one is folded here with
 * everything below it and freed, so memory follows what is alive and a sample of what finished.
 * A done life: finished, no destructor due, every child done. Lives that waited on or woke a
 * waitlist, and the trees holding them, are kept whole (the picture draws who woke whom).
 */
struct model_fold {
	const struct model_kind *kind; /* the lives' kind */
	uint64_t kept;		       /* done lives of the kind kept in full beside the fold */
	uint64_t count;		       /* lives folded */
	uint64_t below;		       /* lives below them, folded with them */
	struct model_kind *lifetimes;  /* theirs (finished, samples, hist, max_ns); NULL: none */
	struct model_fold *next;
	void *node; /* scratch for the presentations */
};
/* Fold finished closures past keep of a kind under one parent (0: never, the default). Call
 * before the first event. */
void model_fold_finished(struct model *m, unsigned keep);
/* The folds under parent (NULL: the tops); borrowed, follow ->next. */
struct model_fold *model_folds(struct model *m, const struct model_life *parent);
/* A copy of a kind's lifetimes (its finished count, samples, histogram, max), to add to. */
struct model_kind *model_kind_copy(const struct model_kind *k);
/* One more lifetime into such a copy. */
void model_kind_add_lifetime(struct model_kind *k, uint64_t ns);
void model_kind_free(struct model_kind *k);

/* Keep every event of the closures id names (whatever its nth), for explain. id is copied. */
void model_watch(struct model *m, const struct model_id *id);

/* The sink that feeds the model from trace_read(); ctx is the model. */
extern const struct trace_sink model_sink;

/*
 * A live view (top): apply the events held in the reorder window that are older than before_ts,
 * which later events can no longer precede.
 */
void model_flush(struct model *m, int64_t before_ts);

/*
 * How an event moved the plain gets still open on a life (open_get, nopen): the model's pairing of
 * references, the one leaks.c blames by. A put or sub gives back the newest open gets; a child's
 * init takes the get it made on its parent out of them (the put when the child finishes is its
 * own). Positions count the open gets from the oldest (0).
 */
enum model_refs_move {
	MODEL_REFS_TAKEN, /* a plain get, open at pos */
	MODEL_REFS_GIVEN, /* a put or sub gave back the n open from pos up */
	MODEL_REFS_CHILD, /* the get open at pos was a child's init's: no longer open */
};

/*
 * An observer sees the model at work (the timeline streams from it): event() after each event is
 * applied, in time order, with the life it went to (NULL: set aside, reported after its closure
 * finished); refs() after event(), when the event moved the open gets of life l (a child's init
 * moves its parent's); finished() when a life finishes, before report mode forgets it. All
 * optional.
 */
struct model_observer {
	void (*event)(void *ctx, const struct trace_event *ev, struct model_life *l);
	void (*refs)(void *ctx, const struct trace_event *ev, struct model_life *l,
		     enum model_refs_move move, uint32_t pos, uint32_t n);
	void (*finished)(void *ctx, struct model_life *l);
};
void model_observe(struct model *m, const struct model_observer *obs, void *ctx);

/*
 * After the last event: drain the reorder window, settle stack closures. exited: the traced
 * process exited before the recording stopped (what an unfinished closure can be depends on it,
 * docs/design.md "What a leak is"); then a stack closure that holds only its running reference had
 * its frame left (kernel fast paths return without closure_sync), and that ends it.
 */
void model_end(struct model *m, bool exited);
/* The exited given to model_end. */
bool model_exited(const struct model *m);

struct model_life *model_lives(struct model *m); /* borrowed: the first life; follow ->next */
struct model_kind *model_kinds(struct model *m); /* borrowed: follow ->next */

/* What the model counted so far. */
struct model_counts {
	uint64_t lives; /* every life seen, freed or not */
	uint64_t finished;
	uint64_t events;
	uint64_t reordered; /* events that arrived out of time order */
	uint64_t late;	    /* events reported after their closure's finish (a preempted thread) */
	int64_t last_ts;    /* the latest event time, once model_end() ran */
};
const struct model_counts *model_counts(const struct model *m); /* borrowed, kept up to date */

/* The life id names (pid 0: the last in creation order of any process); borrowed, NULL when
 * unknown. viz_find_closure() also says why. */
struct model_life *model_find(struct model *m, const struct model_id *id);
/* How many lives the address had in process pid. */
unsigned model_lives_at(struct model *m, int64_t pid, uint64_t addr);
/* The processes in which addr had a life: returns how many, writes the first max to pids (sorted).
 */
size_t model_processes_at(struct model *m, uint64_t addr, int64_t *pids, size_t max);

/* The watched events (model_watch) of one life, in time order; borrowed until the next call. */
const struct trace_event *model_watched(struct model *m, const struct model_life *l, size_t *n);

const struct model_sym *model_sym(struct model *m, uint64_t addr); /* borrowed, NULL: unknown */

/*
 * --stacks (model_stacks.c): the user stack first seen at a call site (an init's or a get's ip),
 * n addresses innermost first, borrowed; NULL (n 0) when the trace has none for it.
 */
const uint64_t *model_site_frames(struct model *m, uint64_t site, unsigned *n);
/* One frame as every presentation shows it: "FILE:LINE (function)". */
const char *model_frame_text(struct model *m, uint64_t ip, char *buf, size_t len);
/* A site's stack under it, as LSan shows an allocation's: "INDENT#0 FILE:LINE (function)" a
 * line; nothing when it has none. */
void model_print_site_frames(struct model *m, FILE *out, uint64_t site, const char *indent);
/* The call sites of the closure_wake_ups that woke a waiter of the waitlist at waitlist in process
 * pid, the first MODEL_WAKE_SITES distinct; *n of them (borrowed; NULL with 0: none). Kept when
 * the closures woken are forgotten (what would wake a waitlist: wakers.h). */
#define MODEL_WAKE_SITES 8
const uint64_t *model_wake_sites(struct model *m, int64_t pid, uint64_t waitlist, unsigned *n);

/* Lifetime percentile (0..100) of a kind's finished closures, in ns. */
uint64_t model_kind_percentile(const struct model_kind *k, double p);

/* Plain (non-child) references of a site. */
static inline int64_t model_site_plain_taken(const struct model_site *s)
{
	return (int64_t)s->taken - s->child_taken;
}
static inline int64_t model_site_plain_put(const struct model_site *s)
{
	return (int64_t)s->put - s->child_put;
}

/*
 * A symbol's file as every presentation shows it, relative to its source root (source_path.h),
 * and that root: the first bytes of s->file, 0 when the file is shown whole. s->file not NULL.
 */
const char *model_sym_file(struct model *m, const struct model_sym *s);
size_t model_sym_root(struct model *m, const struct model_sym *s);
/* The source root every shown file is relative to (with its '/'): the first *len bytes of the
 * string returned (borrowed); NULL when some file is shown whole or the roots differ. */
const char *model_source_root(struct model *m, size_t *len);

/* Text helpers, for every presentation. Each writes into buf (caller-owned) and returns it. */
/* "file:line" of an address, else "func", else "0x..." */
const char *model_site_text(struct model *m, uint64_t ip, char *buf, size_t len);
/* the function of an address, else "0x..." ("-" for 0) */
const char *model_func_text(struct model *m, uint64_t addr, char *buf, size_t len);
/*
 * The name the traced process gave a thread (kind TRACE_NAME_THREAD, id its tid) or a workqueue
 * (TRACE_NAME_WORKQUEUE, id its address) in process pid (the trace's thread and workqueue
 * records; the latest wins), control characters made visible; NULL when it gave none. Borrowed
 * from the model.
 */
const char *model_name(const struct model *m, enum trace_name_kind kind, int64_t pid, uint64_t id);
/* A workqueue as every presentation names it: its name, else "0x..." (its address). */
const char *model_wq_text(const struct model *m, int64_t pid, uint64_t wq, char *buf, size_t len);
/* A closure's id in every output, PID:ADDR#N ("501:0x7ffc5e2a0010#2"; docs/design.md "Naming a
 * closure"): its process, the trace header's when its events name none; ADDR#N when neither does */
const char *model_life_name(const struct model_life *l, char *buf, size_t len);
/*
 * A closure's name, the same in every presentation: its kind, "init_func -> first_continuation"
 * ("init_func" while no continuation has run; without an init in the trace, its continuation).
 * model_kind_name() of the kind's init site and first continuation.
 */
const char *model_life_function(struct model *m, const struct model_life *l, char *buf, size_t len);
/* "init_func -> continuation", "init_func" (fn 0), "-> continuation" (init_ip 0); with its init
 * site, "init_func -> continuation (file:line)", when a kind of another init site has that name
 * (two closures initialised in one function): every name is one kind's. */
const char *model_kind_name(struct model *m, uint64_t init_ip, uint64_t fn, char *buf, size_t len);
/* Where a life without an init came from: "created before recording", or that it was used
 * again after its last life finished without a new init (a bug, or a lost init). */
const char *model_origin_text(const struct model_life *l, char *buf, size_t len);
/* A kind, as report and the ClickHouse export name it: its name and init site,
 * "func -> continuation (file:line)" */
const char *model_kind_text(struct model *m, const struct model_kind *k, char *buf, size_t len);
/* An event's flags as the trace's letters ("RW"), "-" for none; buf holds 8 bytes at least. */
const char *model_flags_text(unsigned flags, char *buf);
/* "12.5 µs" */
const char *model_duration_text(uint64_t ns, char *buf, size_t len);
/* "running", "continuing at fn", "inside closure_sync", ... */
const char *model_state_text(struct model *m, const struct model_life *l, char *buf, size_t len);

#endif
