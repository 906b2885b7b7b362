/*
 * Verdicts (docs/design.md "What a leak is"), one definition for report, graph, explain and check.
 *
 * The process exited: an unfinished closure is leaked (a root cause) or kept alive (only its
 * unfinished children hold it), and stuck when it waits in closure_sync or on a waitlist.
 * The recording stopped while the process ran: nothing is known to be leaked; an unfinished
 * closure is in flight, or a suspect when it has lived far longer than the finished closures of
 * its kind (LEAKS_SUSPECT_*), or when the process made no closure operation in the last
 * LEAKS_IDLE_NS of the recording and no thread waits for it in closure_sync. Either way, a closure
 * first seen without an init after its address's closure finished is an event that reached the
 * trace late: set aside. A stack closure that held only its running reference when its frame was
 * left, and a closure ended by closure_debug_destroy, finished (the model ends them).
 */
#ifndef CLOSURETRACE_LEAKS_H
#define CLOSURETRACE_LEAKS_H

#include "model.h"

/* A suspect: its kind has at least this many finished closures, and its age at the end is over
 * LEAKS_SUSPECT_P99 times their p99 and over LEAKS_SUSPECT_MAX times their max. */
#define LEAKS_SUSPECT_MIN_FINISHED 20
#define LEAKS_SUSPECT_P99	   10
#define LEAKS_SUSPECT_MAX	   2
/*
 * The suspect rule against a kind's finished closures, one definition (report, graph, explain,
 * top): at least LEAKS_SUSPECT_MIN_FINISHED finished, no fewer than are in flight, and an age
 * over both bounds. A kind with more in flight than finished is a queue being worked through
 * (blockio flat out: a million waiting, a thousand done a second): the finished are the first
 * served, and say nothing of how long the rest may wait (top once called 990,000 of them
 * suspects).
 */
static inline bool leaks_outlived(uint64_t age, uint64_t finished, uint64_t in_flight, uint64_t p99,
				  uint64_t max)
{
	return finished >= LEAKS_SUSPECT_MIN_FINISHED && finished >= in_flight &&
	       age > LEAKS_SUSPECT_P99 * p99 && age > LEAKS_SUSPECT_MAX * max;
}

/* A process idle this long at the end of a recording that stopped while it ran: what it left
 * unfinished is a suspect, whatever its kind's lives (none may have finished). */
#define LEAKS_IDLE_NS (1000 * 1000 * 1000LL)

/*
 * How the recording ended (docs/trace-format.md, "end"; viz_end reads it from the trailer): what
 * an unfinished closure can be. Only a process that exited on its own, recorded to the end, has
 * leaks; a recording cut short (check --timeout, --duration, a stop signal, a write error) has
 * closures in flight, and when the recorder ended the process with it, those waiting in
 * closure_sync or on a waitlist then are stuck.
 */
enum leaks_end {
	LEAKS_EXITED,	   /* the process exited on its own: unfinished is leaked */
	LEAKS_CUT_ENDED,   /* cut short, the process ended with it: in flight, stuck when waiting */
	LEAKS_CUT_RUNNING, /* cut short while the process ran on: in flight */
	LEAKS_UNKNOWN,	   /* no end record: in flight */
};

struct leaks_summary {
	enum leaks_end end;
	bool exited; /* end == LEAKS_EXITED: unfinished closures are leaks */
	/* unfinished, and how many of them have each word (leaks_word): they add up to it */
	uint64_t unfinished;
	uint64_t leaked, kept_alive, stuck; /* kept_alive: by leaked or suspect children */
	uint64_t in_flight, suspects;	    /* a recording cut short */
	uint64_t late;			    /* set aside (VERDICT_LATE) */
	uint64_t hang_roots;		    /* roots of a hang (a recording cut short) */
	int64_t end_ts; /* the end of the recording (ns since its start): ages count to it */
	/* LEAKS_CUT_RUNNING with no closure operation in the last LEAKS_IDLE_NS before end_ts:
	 * how long the process was idle (else 0) */
	uint64_t idle_ns;
};

/*
 * The root of a hang (docs/design.md "The root of a hang"). When the recorder ended the process
 * (LEAKS_CUT_ENDED: check --timeout, a stop signal passed on), a process that hung is quiescent.
 * What a stuck closure waits behind: in closure_sync, its unfinished descendants at any depth; on
 * a waitlist, the unfinished closures of its process that would wake it (wakers.h) or their
 * descendants, else, when that finds none, every closure of its process. Of these, the ones
 * nothing will finish are leaked, roots of the hang, blamed on the reference never given back:
 * in flight (or suspect), not waiting themselves, quiet for LEAKS_QUIET_NS, and
 *   - with finished closures of their kind: quiet over LEAKS_QUIET_MAX times the longest life of
 *     their kind, holding a reference those put back (a consistent blame);
 *   - the first of their kind (none finished): holding a reference taken at a call site no put
 *     matched (BLAME_UNMATCHED), or, when they would wake the waitlist, any reference at all.
 * When nothing is stuck (the program waits on something that is not a closure: a wait queue, a
 * condition variable), every closure that fits is a root. In-flight closures that nothing waits
 * behind stay in flight. A stuck closure names the first root it waits behind (model_life.behind):
 * check tells it as a note under that root's error.
 */
#define LEAKS_QUIET_NS	(500 * 1000 * 1000LL)
#define LEAKS_QUIET_MAX 2

/*
 * Fill the verdict fields of every unfinished life of m (after model_end(m, end ==
 * LEAKS_EXITED)). end_ts: the end of the recording (ns since its start; the trailer's
 * duration_ns, else the last event's time): ages count to it. The blamed sites of a root cause
 * (leaked or suspect) are ranked, most likely first, with how sure the ranking is.
 */
void leaks_analyze(struct model *m, enum leaks_end end, int64_t end_ts, struct leaks_summary *out);

/* Whether a life is judged a root cause: leaked, or a suspect. */
static inline bool leaks_is_root_cause(const struct model_life *l)
{
	return !l->finished && (l->verdict == VERDICT_LEAKED || l->verdict == VERDICT_SUSPECT);
}

/*
 * The call site a verdict points at (the one rule for every presentation: the compiler's, the
 * error where the fix goes): for a stuck closure that waits for references of its own that were
 * taken and never given back, where they were taken (leaks_stuck_culprit); for another stuck one
 * where it waits (closure_sync, else closure_wait: leaks_wait_site); for a root cause its first
 * blamed site; else its init site (0 when none is known).
 */
uint64_t leaks_blamed_site(const struct model_life *l);
/* A stuck closure's reference taken and never given back: its own, else that of an unfinished
 * child not judged itself (NULL: none known). */
const struct model_blame *leaks_stuck_culprit(const struct model_life *l);
uint64_t leaks_wait_site(const struct model_life *l);

/*
 * A closure's verdict in one word, the same in every output (leaks_words.c): finished, set aside,
 * root of a hang, stuck, leaked, kept alive, suspect or in flight. Each unfinished closure has
 * one; the counts of leaks_summary are of these words (they add up to its unfinished). A root of
 * a hang comes first, then stuck (a closure still waiting when the process ended, leaked or kept
 * alive or in flight besides), then the verdict.
 */
enum leaks_word {
	LEAKS_WORD_FINISHED,
	LEAKS_WORD_SET_ASIDE,
	LEAKS_WORD_HANG_ROOT,
	LEAKS_WORD_STUCK,
	LEAKS_WORD_LEAKED,
	LEAKS_WORD_KEPT_ALIVE,
	LEAKS_WORD_SUSPECT,
	LEAKS_WORD_IN_FLIGHT,
	LEAKS_NR_WORDS
};
enum leaks_word leaks_word(const struct model_life *l);
const char *leaks_word_text(enum leaks_word w); /* "root of a hang" (static) */
const char *leaks_word_caps(enum leaks_word w); /* "ROOT OF A HANG": a picture's emphasis */
const char *leaks_word_key(enum leaks_word w);	/* "hang_root": a JSON member, a category */
const char *leaks_verdict_word(const struct model_life *l); /* leaks_word_text(leaks_word(l)) */
/* "1 root of a hang", "2 roots of a hang", "3 suspects", "2 kept alive"; into buf, returned */
const char *leaks_word_count(enum leaks_word w, uint64_t n, char *buf, size_t len);
/* The rule that makes a suspect, in words (report's note and its JSON warnings say it). */
const char *leaks_suspect_rule(const struct leaks_summary *s, char *buf, size_t len);

/*
 * Why an unfinished life of a recording that stopped early is in flight or a suspect, with the
 * numbers: "alive 2.9 s; finished closures of its kind live p99 4.0 ms, max 9.9 ms". Writes into
 * buf (caller-owned), returns it.
 */
const char *leaks_age_text(const struct model_life *l, char *buf, size_t len);

/* Identical verdicts folded into one: same verdict, kind, blame, and references held. */
struct leaks_group {
	struct model_life *first; /* the oldest; borrowed */
	uint64_t count;
};

/* The groups of the unfinished lives of word w, most numerous first (then oldest first).
 * New array (free() it), *n groups; NULL with *n 0 when there is none or no memory. */
struct leaks_group *leaks_fold(struct model *m, enum leaks_word w, size_t *n);

/* "took 1 more reference than ..." for a blame; writes into buf (caller-owned), returns it. */
const char *leaks_blame_text(struct model *m, const struct model_blame *b, char *buf, size_t len);
/* A few words for a picture: "a put is missing" (static). */
const char *leaks_blame_short(const struct model_blame *b);
/* A blame's kind for machines: "excess_take", "missing_put", ... (static; report --json, export) */
const char *leaks_blame_name(enum blame_kind k);
const char *leaks_sure_text(enum blame_sure sure); /* static: "high", "medium", "low" */

/* The topmost ancestor still in the model (l itself when it has no parent); borrowed. A cycle of
 * parents (a corrupt trace) stops the walk where it would come round again. */
struct model_life *leaks_root_of(struct model_life *l);

/* Walks over parents stop after this many steps, whatever the trace says. */
#define LEAKS_MAX_DEPTH 100000

#endif
