/* The life of one closure, operation by operation: time, thread, op, count after, call site. */
#include <inttypes.h>
#include <string.h>

#include "trace_args.h"
#include "trace_text.h"
#include "viz.h"

#define TXT 512

/*
 * What an operation did, beyond the count, in words. An operation without words of its own here
 * is told from the probe contract (trace_args.h): each argument it has, "name value", code
 * addresses by their function; so that an operation added to the contract is explained as it is.
 */
typedef void words_fn(struct model *m, const struct trace_event *ev, char *buf, size_t len);

static void words_none(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	(void)m, (void)ev, (void)buf, (void)len; /* the count says it all (get, finish) */
}

static void words_init(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	(void)m;
	if (ev->stack)
		snprintf(buf, len, "stack closure");
	else if (ev->parent)
		snprintf(buf, len, "parent 0x%" PRIx64, ev->parent);
}

static void words_continue_at(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	char a[TXT], b[TXT];

	if (ev->how == TRACE_HOW_RETURN)
		snprintf(buf, len, "closure_return");
	else if (ev->how == TRACE_HOW_DESTRUCTOR)
		snprintf(buf, len, "return with destructor %s",
			 model_func_text(m, ev->fn, a, sizeof(a)));
	else
		snprintf(buf, len, "%s%s%s%s", ev->how == TRACE_HOW_NOBARRIER ? "nobarrier: " : "",
			 model_func_text(m, ev->fn, a, sizeof(a)), ev->wq ? " on wq " : "",
			 ev->wq ? model_wq_text(m, ev->pid, ev->wq, b, sizeof(b)) : "");
}

/* run and destructor: the function alone. */
static void words_fn_only(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	model_func_text(m, ev->fn, buf, len);
}

static void words_sync_begin(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	(void)m;
	if (ev->timeout_ms >= 0)
		snprintf(buf, len, "timeout %" PRId64 " ms", ev->timeout_ms);
}

static void words_sync_end(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	(void)m;
	if (ev->ret)
		snprintf(buf, len, "timed out");
}

static void words_bug(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	(void)m;
	text_visible(buf, len, ev->bug); /* what the trace says: shown as every name is */
}

static words_fn *const op_words[TRACE_NR_OPS] = {
	[TRACE_INIT] = words_init,
	[TRACE_GET] = words_none,
	[TRACE_CONTINUE_AT] = words_continue_at,
	[TRACE_RUN] = words_fn_only,
	[TRACE_FINISH] = words_none,
	[TRACE_DESTRUCTOR] = words_fn_only,
	[TRACE_SYNC_BEGIN] = words_sync_begin,
	[TRACE_SYNC_END] = words_sync_end,
	[TRACE_BUG] = words_bug,
};

static void detail(struct model *m, const struct trace_event *ev, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	if ((unsigned)ev->op >= TRACE_NR_OPS)
		return;
	if (op_words[ev->op]) {
		op_words[ev->op](m, ev, buf, len);
		return;
	}
	for (size_t i = 0; i < 3 && at < len; i++) {
		const struct trace_arg *a = &trace_op_args[ev->op][i];
		char v[TXT];

		if (!a->name)
			continue;
		if (a->type == TRACE_ARG_FN)
			model_func_text(m, trace_arg_value(ev, a), v, sizeof(v));
		else
			trace_arg_text(ev, a, v, sizeof(v));
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s", at ? ", " : "", a->name, v);
	}
}

/* An event's time since the start of the recording, exact to the ns: "1.310000 ms". */
static const char *time_text(int64_t ts, char *buf, size_t len)
{
	uint64_t a = ts < 0 ? (uint64_t)0 - (uint64_t)ts : (uint64_t)ts;

	snprintf(buf, len, "%s%" PRIu64 ".%06" PRIu64 " ms", ts < 0 ? "-" : "", a / 1000000,
		 a % 1000000);
	return buf;
}

/* The sites a verdict blames: a root cause's, or what held a closure in flight when its process
 * was ended (leaks.c). */
static void blame_lines(struct model *m, const struct model_life *l, FILE *out)
{
	char site[TXT], why[2 * TXT];

	for (unsigned i = 0; i < l->nblames; i++) {
		fprintf(out, "  %s %s: %s\n", i ? "also: " : "blame:",
			model_site_text(m, l->blames[i].site, site, sizeof(site)),
			leaks_blame_text(m, &l->blames[i], why, sizeof(why)));
		model_print_site_frames(m, out, l->blames[i].site, "      ");
	}
	if (l->nblames)
		fprintf(out, "  sure: %s (%s)\n", leaks_sure_text(l->sure), l->sure_why);
}

/* A root cause's references, and for a root of a hang what waits behind it. */
static void hang_lines(const struct model_life *l, FILE *out)
{
	char quiet[32];

	if (l->remaining < 0) /* named as a parent only */
		fprintf(out, ", its count not known (created before recording)\n");
	else
		fprintf(out, ", holds %" PRId64 " reference%s\n", l->remaining,
			l->remaining == 1 ? "" : "s");
	if (l->hang_root && l->waiting_behind)
		fprintf(out,
			"  %" PRIu64 " stuck closure%s wait%s behind it; quiet for %s before the "
			"process was ended\n",
			l->waiting_behind, l->waiting_behind == 1 ? "" : "s",
			l->waiting_behind == 1 ? "s" : "",
			model_duration_text(l->hang_quiet_ns, quiet, sizeof(quiet)));
	else if (l->hang_root)
		fprintf(out,
			"  nothing waits in a closure (the program waits on something else); quiet "
			"for %s before the process was ended\n",
			model_duration_text(l->hang_quiet_ns, quiet, sizeof(quiet)));
}

static void verdict_lines(struct viz_input *in, const struct model_life *l, FILE *out)
{
	struct model *m = in->m;
	char why[2 * TXT], name[64];

	if (l->finished) {
		char d[32];

		fprintf(out, "verdict: finished after %s%s%s\n",
			model_duration_text((uint64_t)l->end_ts - (uint64_t)l->start_ts, d,
					    sizeof(d)),
			l->frame_left ? " (a stack closure holding only its running reference when "
					"its frame was left)"
				      : "",
			l->destroyed ? " (closure_debug_destroy)" : "");
		return;
	}
	/* Its word first, as every output says it (leaks_word), then why. */
	fprintf(out, "verdict: %s", leaks_verdict_word(l));
	if (l->verdict == VERDICT_IN_FLIGHT) {
		char end[256];

		fprintf(out, "%s (%s): %s\n",
			l->stuck ? ": still waiting when the process ended" : "",
			viz_end_text(&in->info, end, sizeof(end)),
			leaks_age_text(l, why, sizeof(why)));
		blame_lines(m, l, out);
	} else if (l->verdict == VERDICT_LATE) {
		fprintf(out,
			": seen without an init after #%u finished (an event that reached the "
			"trace late)\n",
			l->nth - 1);
	} else if (l->verdict == VERDICT_KEPT_ALIVE) {
		fprintf(out, "%s by its unfinished children:", l->stuck ? ", kept alive" : "");
		for (struct model_life *c = l->first_child; c; c = c->next_sibling)
			if (!c->finished)
				fprintf(out, " %s", model_life_name(c, name, sizeof(name)));
		fputc('\n', out);
	} else {
		hang_lines(l, out);
		if (l->verdict == VERDICT_SUSPECT)
			fprintf(out, "  %s\n", leaks_age_text(l, why, sizeof(why)));
		if (!l->nblames && l->sure_why)
			fprintf(out, "  blame: no call site (%s)\n", l->sure_why);
		blame_lines(m, l, out);
	}
	if (viz_incomplete(in))
		fprintf(out, "  (incomplete: the trace %s)\n",
			in->info.lost > 0 ? "lost events" : "was cut short");
}

int render_explain(struct viz_input *in, const struct model_id *id, FILE *out,
		   struct trace_error *err)
{
	struct model *m = in->m;
	char name[64], func[TXT], site[TXT], state[2 * TXT], fl[8], d[TXT], t[32];
	struct model_life *l = viz_find_closure(in, id, err);
	const struct trace_event *evs;
	unsigned lives;
	size_t n;

	if (!l)
		return -1;
	lives = model_lives_at(m, l->pid, l->addr);
	fprintf(out, "%s %s", model_life_name(l, name, sizeof(name)),
		model_life_function(m, l, func, sizeof(func)));
	if (l->init_ip)
		fprintf(out, ", init at %s", model_site_text(m, l->init_ip, site, sizeof(site)));
	else
		fprintf(out, ", %s", model_origin_text(l, site, sizeof(site)));
	if (l->parent) /* the parent's id; its address alone when the trace never had it */
		fprintf(out, ", parent %s", model_life_name(l->parent, d, sizeof(d)));
	else if (l->parent_addr)
		fprintf(out, ", parent 0x%" PRIx64, l->parent_addr);
	fputc('\n', out);
	if (!id->nth && lives > 1) {
		/* the id of its first life, whose #1 the reader changes */
		snprintf(d, sizeof(d), "%s", model_life_name(l, name, sizeof(name)));
		*strrchr(d, '#') = '\0';
		fprintf(out, "(0x%" PRIx64 " had %u lives; this is the last: name one as %s#N)\n",
			l->addr, lives, d);
	}
	fprintf(out, "%18s %8s  %-12s %5s %-5s %s\n", "time", "thread", "op", "count", "flags",
		"site (function)");
	evs = model_watched(m, l, &n);
	for (size_t i = 0; i < n; i++) {
		const struct trace_event *ev = &evs[i];
		const struct model_sym *s = model_sym(m, ev->ip);

		fprintf(out, "%18s %8" PRId64 "  %-12s %5" PRId64 " %-5s %s",
			time_text(ev->ts, t, sizeof(t)), ev->tid, trace_op_name(ev->op),
			ev->remaining, model_flags_text(ev->flags, fl),
			model_site_text(m, ev->ip, site, sizeof(site)));
		if (s && s->func && s->file)
			fprintf(out, " (%s)", s->func);
		detail(m, ev, d, sizeof(d));
		if (d[0])
			fprintf(out, "  %s", d);
		fputc('\n', out);
	}
	fprintf(out, "state at the end: %s\n", model_state_text(m, l, state, sizeof(state)));
	verdict_lines(in, l, out);
	return 0;
}
