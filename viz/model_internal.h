/*
 * The model's insides, shared by its files (model.c: lives and events, and the reorder window they
 * arrive through; model_kinds.c: kinds and lifetimes; model_text.c: symbols and text). Not for the
 * presentations: they use model.h.
 */
#ifndef CLOSURETRACE_MODEL_INTERNAL_H
#define CLOSURETRACE_MODEL_INTERNAL_H

#include "hashmap.h"
#include "model.h"
#include "time_order.h"
#include "xalloc.h"

/*
 * One slot per address of one process (key: address, pid): its current life and how many lives it
 * had. A trace of several processes (check follows forks) sees the same addresses in each, so pid
 * is in the key (0: the trace names no process per event).
 */
struct addr_slot {
	struct model_life *life;
	unsigned lives;
	uint32_t peak; /* the highest count its latest life reached: tells late events apart */
};

struct watched {
	unsigned nth;
	struct trace_event ev;
};

struct model_wakes {
	uint64_t ip[MODEL_WAKE_SITES];
	unsigned n;
};

struct model {
	bool keep_finished;
	/* The folder the absolute files of symbols without a compile folder share (model_text.c),
	 * found again after a new symbol: its length, 0 none. */
	size_t shared_root;
	bool shared_root_known;
	struct hashmap slots; /* (address, pid) -> struct addr_slot */
	struct hashmap syms;  /* (address, 0) -> struct model_sym */
	struct hashmap names[2];   /* by enum trace_name_kind: (id, pid) -> struct model_name */
	struct hashmap kind_index; /* (init site, first continuation) -> struct model_kind * */
	struct hashmap stacks;	   /* (call site, 0) -> its first stack (model_stacks.c) */
	struct hashmap wakes;	   /* (waitlist, pid) -> struct model_wakes */
	struct model_kind *kinds;  /* every kind, newest first */
	struct model_life *first, *last;
	struct model_counts n;
	int64_t max_seen_ts;
	struct time_order window; /* the reorder window's events (model.c) */
	bool watching;
	struct model_id watch_id; /* pid 0: at that address in every process */
	struct watched *watched;
	size_t nwatched, capwatched;
	struct trace_event *watch_out;
	/* Kind names (model_text.c): by a name's hash, its first init site and whether a kind of
	 * another init site has that name too; the init sites and continuations they name; the
	 * newest kind in them; stale when a symbol of theirs changed. Made on first use. */
	struct hashmap kind_names, kind_addrs;
	const struct model_kind *kind_names_upto;
	bool kind_names_stale;
	bool exited;
	bool ending;		      /* model_end's walks have begun */
	unsigned fold_keep;	      /* model_fold_finished's keep; 0: fold nothing */
	struct model_fold *top_folds; /* folded lives without a parent */
	int64_t header_pid; /* the process of events that name none (the trace header's; 0: none) */
	const struct model_observer *obs;
	void *obs_ctx;
	/* How the event being applied moved open gets, for the observer's refs() (life NULL: not)
	 */
	struct {
		struct model_life *life;
		enum model_refs_move move;
		uint32_t pos, n;
	} moved;
};

/* Frees a life, unlinked from its parent and children (model.c). */
void model_life_free(struct model *m, struct model_life *l);
typedef void model_life_free_fn(struct model *m, struct model_life *l);
/* A finished life with nothing pending (model_fold_finished): done, maybe folded and freed with
 * life_free (model_life_free: given, so that model_fold.c calls nothing above it). */
void model_fold_done(struct model *m, struct model_life *l, model_life_free_fn *life_free);
/* Frees a list of folds (model_fold.c). */
void model_folds_free(struct model_fold *f);

/* A wake-up of a waitlist's waiter noted (model_wakes.c). */
void model_note_wake(struct model *m, int64_t pid, const struct trace_event *ev);

/* The sym record sink (model_text.c). */
void model_on_sym(void *ctx, const struct trace_sym *sym);
/* Frees the symbols' strings and their table (model_text.c). */
void model_syms_free(struct model *m);
void model_on_name(void *ctx, const struct trace_name *name);
/* The header record sink (model_text.c): its process names the lives of events that name none. */
void model_on_header(void *ctx, const struct trace_info *info);
/* The frames sink, and the stacks' memory (model_stacks.c). */
void model_on_frames(void *ctx, const struct trace_event *ev, const uint64_t *ips, unsigned n);
void model_stacks_free(struct model *m);

/* The kind (init site, first continuation), made on first use. */
struct model_kind *model_kind_of(struct model *m, uint64_t init_ip, uint64_t fn);
/* A finished life's lifetime and references, added to its kind. */
void model_kind_add_finished(struct model *m, struct model_life *l);
/* The entry of ip in a site list, added when new. */
struct model_site *model_site_in(struct model_site **sites, unsigned *n, unsigned *cap,
				 uint64_t ip);

#endif
