/*
 * The report, in the spirit of perf report: totals, closures by kind with lifetime percentiles,
 * leaks (root causes first, each with its blamed call site and the chain to its root), stuck
 * closures, and what makes the verdicts incomplete. --json gives the same as one JSON document
 * (report_json.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "trace_text.h"
#include "viz.h"

static const char *site_with_func(struct model *m, uint64_t ip, char *buf, size_t len)
{
	char site[TXT], func[TXT];
	const struct model_sym *s = model_sym(m, ip);

	model_site_text(m, ip, site, sizeof(site));
	if (s && s->func && s->file)
		text_snprintf(buf, len, "%s (%s)", site,
			      model_func_text(m, ip, func, sizeof(func)));
	else
		text_snprintf(buf, len, "%s", site);
	return buf;
}

/* ---- text ---- */

/* The trailer's notes: the trees sampled, the closures the snapshot missed, whose counts. */
static void text_trailer_notes(const struct trace_info *info, FILE *out)
{
	const char *(*const notes[])(const struct trace_info *, char *, size_t) = {
		report_sampled_text, report_missed_text, report_unread_text, report_claims_text};
	char note[512];

	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (*notes[i](info, note, sizeof(note)))
			fprintf(out, "# note: %s\n", note);
}

static void text_header(struct viz_input *in, FILE *out)
{
	struct model *m = in->m;
	const struct trace_info *info = &in->info;
	char d[64], end[256], rule[320], shown[4096 * TEXT_ESCAPE_MAX], roots[64];

	/* What the trace says is shown as every name is (trace_text.h). */
	fprintf(out, "# closuretrace report of %s\n", text_visible(shown, sizeof(shown), in->path));
	fprintf(out, "# pid %lld%s%s, %" PRIu64 " event%s", info->pid, info->exe ? " " : "",
		text_visible(shown, sizeof(shown), info->exe), model_counts(m)->events,
		model_counts(m)->events == 1 ? "" : "s");
	if (info->has_end)
		fprintf(out, ", %s, stopped: %s",
			model_duration_text((uint64_t)info->duration_ns, d, sizeof(d)),
			text_visible(shown, sizeof(shown), info->reason ? info->reason : "?"));
	fputc('\n', out);
	if (!info->has_end)
		fprintf(out,
			"# warning: the trace was cut short (no end record): closures in flight "
			"when it stopped look unfinished\n");
	if (info->lost > 0)
		fprintf(out, "# warning: %lld event%s lost: every verdict below is incomplete\n",
			info->lost, info->lost == 1 ? " was" : "s were");
	text_trailer_notes(info, out);
	if (info->has_end && !in->leaks.exited)
		fprintf(out, "# note: %s: unfinished closures are in flight, not leaks%s; %s\n",
			viz_end_text(info, end, sizeof(end)),
			in->leaks.end == LEAKS_CUT_ENDED ? ", and those still waiting are stuck"
							 : "",
			leaks_suspect_rule(&in->leaks, rule, sizeof(rule)));
	else if (!in->leaks.exited)
		fprintf(out, "# note: whether the process exited is not known: unfinished closures "
			     "are in flight, not leaks\n");
	if (model_counts(m)->reordered)
		fprintf(out,
			"# %" PRIu64 " event%s out of time order (from other CPUs) and %s put "
			"back in order\n",
			model_counts(m)->reordered,
			model_counts(m)->reordered == 1 ? " arrived" : "s arrived",
			model_counts(m)->reordered == 1 ? "was" : "were");
	if (model_counts(m)->late)
		fprintf(out,
			"# %" PRIu64 " event%s reported after %s closure finished (%s "
			"thread was preempted before its probe) and set aside\n",
			model_counts(m)->late, model_counts(m)->late == 1 ? " was" : "s were",
			model_counts(m)->late == 1 ? "its" : "their",
			model_counts(m)->late == 1 ? "its" : "their");
	if (in->leaks.late)
		fprintf(out,
			"# %" PRIu64
			" closure%s seen without an init after the closure at %s address "
			"finished (events that reached the trace late): set aside\n",
			in->leaks.late, in->leaks.late == 1 ? " was" : "s were",
			in->leaks.late == 1 ? "its" : "their");
	fprintf(out, "\n");
	fprintf(out, "closures: %" PRIu64 " (%" PRIu64 " finished, %" PRIu64 " unfinished: ",
		model_counts(m)->lives, model_counts(m)->finished, in->leaks.unfinished);
	if (in->leaks.exited)
		fprintf(out,
			"%" PRIu64 " leaked, %" PRIu64 " kept alive by them; %" PRIu64 " stuck",
			in->leaks.leaked, in->leaks.kept_alive, in->leaks.stuck);
	else
		fprintf(out,
			"%" PRIu64 " in flight, %" PRIu64 " suspect%s, %" PRIu64
			" kept alive by them",
			in->leaks.in_flight, in->leaks.suspects, in->leaks.suspects == 1 ? "" : "s",
			in->leaks.kept_alive);
	if (in->leaks.hang_roots)
		fprintf(out, "; %s",
			leaks_word_count(LEAKS_WORD_HANG_ROOT, in->leaks.hang_roots, roots,
					 sizeof(roots)));
	if (!in->leaks.exited && in->leaks.stuck)
		fprintf(out, "; %" PRIu64 " stuck", in->leaks.stuck);
	if (in->leaks.late)
		fprintf(out, "; %" PRIu64 " set aside", in->leaks.late);
	fprintf(out, ")\n\n");
}

static void text_kinds(struct viz_input *in, FILE *out)
{
	struct model *m = in->m;
	size_t n = 0;
	struct model_kind **kinds = report_sorted_kinds(m, &n);
	char p50[32], p90[32], p99[32], max[32], kind[3 * TXT];

	fprintf(out, "closures by kind (init function -> continuation, init site), lifetimes of "
		     "the finished ones:\n");
	fprintf(out, "%8s %8s %10s %10s %10s %10s %10s  %s\n", "count", "finished", "unfinished",
		"p50", "p90", "p99", "max", "kind");
	for (size_t i = 0; kinds && i < n; i++) {
		struct model_kind *k = kinds[i];

		if (k->finished) {
			model_duration_text(model_kind_percentile(k, 50), p50, sizeof(p50));
			model_duration_text(model_kind_percentile(k, 90), p90, sizeof(p90));
			model_duration_text(model_kind_percentile(k, 99), p99, sizeof(p99));
			model_duration_text(k->max_ns, max, sizeof(max));
		} else {
			strcpy(p50, "-");
			strcpy(p90, "-");
			strcpy(p99, "-");
			strcpy(max, "-");
		}
		fprintf(out, "%8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %10s %10s %10s %10s  %s\n",
			k->total, k->finished, k->unfinished, p50, p90, p99, max,
			model_kind_text(m, k, kind, sizeof(kind)));
	}
	fputc('\n', out);
	free(kinds);
}

static void text_held(const struct model_life *l, FILE *out)
{
	const char *sep = "";

	if (l->remaining < 0) { /* named as a parent only */
		fprintf(out, "    holds references not known (created before recording, its count "
			     "never seen)\n");
		return;
	}
	fprintf(out, "    holds %" PRId64 " reference%s:", l->remaining,
		l->remaining == 1 ? "" : "s");
	if (l->held_running)
		fprintf(out, "%s running", sep), sep = ",";
	if (l->held_waitlist)
		fprintf(out, "%s waitlist", sep), sep = ",";
	if (l->held_children)
		fprintf(out, "%s %" PRId64 " by unfinished children", sep, l->held_children),
			sep = ",";
	if (l->held_other)
		fprintf(out, "%s %" PRId64 " %s", sep, l->held_other,
			l->before_recording ? "of unknown origin (no init)"
					    : "taken with closure_get");
	fputc('\n', out);
}

static void text_life_line(struct model *m, const struct model_life *l, FILE *out,
			   const char *indent)
{
	char name[64], func[TXT], site[TXT], state[2 * TXT], age[32];

	fprintf(out, "%s%s %s", indent, model_life_name(l, name, sizeof(name)),
		model_life_function(m, l, func, sizeof(func)));
	if (l->init_ip)
		fprintf(out, ", init at %s", model_site_text(m, l->init_ip, site, sizeof(site)));
	else
		fprintf(out, ", %s", model_origin_text(l, site, sizeof(site)));
	fprintf(out, ": %s, alive %s at the end", model_state_text(m, l, state, sizeof(state)),
		model_duration_text(report_age_at_end(m, l), age, sizeof(age)));
	if (l->reused)
		fprintf(out, " (its address was initialised again while it was unfinished)");
	fputc('\n', out);
}

/* The chain from a closure to its root, nearest first, at most this many lines. */
#define CHAIN_SHOWN 8

static void text_chain(struct model *m, const struct model_life *l, FILE *out)
{
	unsigned depth = 0;

	fprintf(out, "    chain to the root:\n");
	for (const struct model_life *p = l->parent; p && p != l; p = p->parent) {
		if (depth++ == CHAIN_SHOWN) {
			unsigned more = 0;

			for (; p && p != l && more < LEAKS_MAX_DEPTH; p = p->parent)
				more++;
			fprintf(out, "      ... %u more level%s to the root%s\n", more,
				more == 1 ? "" : "s", p && p != l ? " (and more)" : "");
			return;
		}
		text_life_line(m, p, out, "      <- ");
		if (!p->finished && p->verdict == VERDICT_KEPT_ALIVE) /* as explain says it */
			fprintf(out, "         %s by its unfinished children\n",
				p->stuck ? "stuck, kept alive" : "kept alive");
	}
}

/* The call sites a verdict blames, most likely first. */
static void text_blames(struct model *m, const struct model_life *l, FILE *out)
{
	char site[TXT], why[2 * TXT];

	for (unsigned i = 0; i < l->nblames; i++)
		if (i)
			fprintf(out, "    also:  %s: %s\n",
				site_with_func(m, l->blames[i].site, site, sizeof(site)),
				leaks_blame_text(m, &l->blames[i], why, sizeof(why)));
		else
			fprintf(out, "    blame: %s: %s (sure: %s, %s)\n",
				site_with_func(m, l->blames[0].site, site, sizeof(site)),
				leaks_blame_text(m, &l->blames[0], why, sizeof(why)),
				leaks_sure_text(l->sure), l->sure_why);
}

/* One root cause (leaked or suspect), for a group of count identical ones. */
static void text_root_cause(struct viz_input *in, const struct leaks_group *g, unsigned nr,
			    FILE *out)
{
	struct model *m = in->m;
	const struct model_life *l = g->first;
	char name[64], why[2 * TXT];
	unsigned children = 0;

	fprintf(out, "\n  %s %u",
		l->verdict == VERDICT_SUSPECT ? "suspect"
		: l->hang_root		      ? "root"
					      : "leak",
		nr);
	if (g->count > 1)
		fprintf(out, " [%" PRIu64 " closures]", g->count);
	fprintf(out, "%s: ", viz_incomplete(in) ? " (incomplete)" : "");
	text_life_line(m, l, out, "");
	if (l->verdict == VERDICT_SUSPECT)
		fprintf(out, "    %s%s\n", g->count > 1 ? "the oldest: " : "",
			leaks_age_text(l, why, sizeof(why)));
	text_held(l, out);
	if (!l->nblames && l->sure_why)
		fprintf(out, "    blame: no call site (%s)\n", l->sure_why);
	text_blames(m, l, out);
	for (struct model_life *c = l->first_child; c; c = c->next_sibling)
		if (!c->finished && children++ < CHAIN_SHOWN)
			fprintf(out, "    held by child %s\n",
				model_life_name(c, name, sizeof(name)));
	if (children > CHAIN_SHOWN)
		fprintf(out, "    ... and %u more unfinished child%s\n", children - CHAIN_SHOWN,
			children - CHAIN_SHOWN == 1 ? "" : "ren");
	if (l->parent)
		text_chain(m, l, out);
}

/* Groups of root causes told one by one; --json lists every closure. */
#define MAX_GROUPS_TOLD 20

static void text_root_causes(struct viz_input *in, enum leaks_word w, FILE *out)
{
	size_t n = 0;
	struct leaks_group *groups = leaks_fold(in->m, w, &n);

	for (size_t i = 0; i < n; i++) {
		if (i == MAX_GROUPS_TOLD) {
			fprintf(out,
				"\n  ... and %zu more kinds of %s ('closuretrace report --json' "
				"lists every one)\n",
				n - i,
				w == LEAKS_WORD_SUSPECT	    ? "suspects"
				: w == LEAKS_WORD_HANG_ROOT ? "roots of a hang"
							    : "leaks");
			break;
		}
		text_root_cause(in, &groups[i], (unsigned)i + 1, out);
	}
	free(groups);
}

static void text_leaks(struct viz_input *in, FILE *out)
{
	const struct leaks_summary *s = &in->leaks;

	if (!s->exited) {
		if (s->hang_roots) {
			fprintf(out,
				"%s: %" PRIu64 " closure%s that stuck closures "
				"wait behind, quiet, holding a reference nothing gives back\n",
				s->hang_roots == 1 ? "root of a hang" : "roots of a hang",
				s->hang_roots, s->hang_roots == 1 ? "" : "s");
			text_root_causes(in, LEAKS_WORD_HANG_ROOT, out);
			fputc('\n', out);
		}
		fprintf(out,
			"in flight: %" PRIu64 " closure%s (still at work when the recording "
			"stopped)\n",
			s->in_flight, s->in_flight == 1 ? "" : "s");
		if (!s->suspects) {
			fprintf(out, "suspects: none%s\n\n",
				viz_incomplete(in) ? " found (the trace is incomplete)" : "");
			return;
		}
		fprintf(out, "suspects: %" PRIu64 " (see the note above)\n", s->suspects);
		text_root_causes(in, LEAKS_WORD_SUSPECT, out);
		fputc('\n', out);
		return;
	}
	if (!s->leaked) {
		fprintf(out, "leaks: none%s\n\n",
			viz_incomplete(in) ? " found (the trace is incomplete)" : "");
		return;
	}
	fprintf(out, "leaks: %" PRIu64 " root cause%s%s\n", s->leaked, s->leaked == 1 ? "" : "s",
		viz_incomplete(in) ? " (incomplete: see the warnings)" : "");
	text_root_causes(in, LEAKS_WORD_LEAKED, out);
	fputc('\n', out);
}

/* What holds the children of a stuck closure that were in flight when the process was ended (a
 * leaked child is told with the leaks). */
static void text_children_in_flight(struct model *m, const struct model_life *l, FILE *out)
{
	char name[64], site[TXT], why[2 * TXT];
	unsigned told = 0;

	for (struct model_life *c = l->first_child; c; c = c->next_sibling) {
		if (c->finished || c->verdict != VERDICT_IN_FLIGHT || !c->nblames)
			continue;
		if (told++ == CHAIN_SHOWN)
			break;
		fprintf(out, "    child %s in flight: %s: %s\n",
			model_life_name(c, name, sizeof(name)),
			site_with_func(m, c->blames[0].site, site, sizeof(site)),
			leaks_blame_text(m, &c->blames[0], why, sizeof(why)));
	}
}

static void text_stuck(struct viz_input *in, FILE *out)
{
	struct model *m = in->m;
	char site[TXT], name[64];

	if (!in->leaks.stuck)
		return;
	fprintf(out, "stuck: %" PRIu64 "\n", in->leaks.stuck);
	for (struct model_life *l = model_lives(m); l; l = l->next) {
		if (l->finished || !l->stuck)
			continue;
		text_life_line(m, l, out, "  ");
		if (l->on_waitlist)
			fprintf(out, "    waits on waitlist 0x%" PRIx64 " (closure_wait at %s)\n",
				l->waitlist, site_with_func(m, l->wait_ip, site, sizeof(site)));
		if (l->state == MODEL_SYNCING) {
			fprintf(out,
				"    waits in closure_sync (at %s) for %" PRId64 " reference%s",
				site_with_func(m, l->sync_ip, site, sizeof(site)), l->remaining,
				l->remaining == 1 ? "" : "s");
			for (struct model_life *c = l->first_child; c; c = c->next_sibling)
				if (!c->finished)
					fprintf(out, ", child %s",
						model_life_name(c, name, sizeof(name)));
			if (l->held_other)
				fprintf(out, ", %" PRId64 " taken with closure_get", l->held_other);
			fputc('\n', out);
		}
		text_blames(m, l, out); /* a stuck closure is told here only (leaks_word) */
		text_children_in_flight(m, l, out);
	}
	fputc('\n', out);
}

int render_report(struct viz_input *in, FILE *out, bool json)
{
	if (json)
		return report_json(in, out);
	text_header(in, out);
	text_kinds(in, out);
	text_leaks(in, out);
	text_stuck(in, out);
	return 0;
}
