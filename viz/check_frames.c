/*
 * check's stacks (--stacks): under each diagnostic, the user stack of the call site it blames,
 * one frame a line as LSan shows an allocation's stack; in SARIF, a code flow (check_sarif.c).
 */
#include <stdlib.h>

#include "check_diag.h"
#include "model.h"

/*
 * The site whose stack stands under the diagnostic: the blamed site when the trace has its stack;
 * else a stuck closure's culprit get (its error points where it waits, which has none); else the
 * closure's init. 0 when none has one.
 */
static uint64_t stacked_site(struct model *m, const struct model_life *l, bool *of_init)
{
	const struct model_blame *culprit = l->stuck ? leaks_stuck_culprit(l) : NULL;
	uint64_t tries[3] = {leaks_blamed_site(l), culprit ? culprit->site : 0, l->init_ip};
	unsigned n;

	for (int i = 0; i < 3; i++)
		if (tries[i] && model_site_frames(m, tries[i], &n)) {
			*of_init = i == 2 && tries[i] != tries[0];
			return tries[i];
		}
	return 0;
}

int check_diag_frames(struct check_diag *d, struct model *m, const struct model_life *l)
{
	bool of_init = false;
	uint64_t site = stacked_site(m, l, &of_init);
	const uint64_t *ips = site ? model_site_frames(m, site, &d->nframes) : NULL;

	d->frames = NULL;
	d->frames_of_init = of_init;
	if (!ips) {
		d->nframes = 0;
		return 0;
	}
	d->frames = calloc(d->nframes, sizeof(*d->frames));
	if (!d->frames)
		return -1;
	for (unsigned i = 0; i < d->nframes; i++)
		d->frames[i] = check_site_at(m, ips[i]);
	return 0;
}

void check_diag_print_frames(const struct check_diag *d, FILE *out)
{
	if (d->nframes && d->frames_of_init)
		fputs("    (the stack of the closure's init)\n", out);
	for (unsigned i = 0; i < d->nframes; i++) {
		const struct check_site *s = &d->frames[i];

		fprintf(out, "    #%u ", i);
		if (s->file && s->line > 0)
			fprintf(out, "%s:%ld", check_site_file(s, false), s->line);
		else if (s->file)
			fputs(check_site_file(s, false), out);
		else
			fputs("??", out);
		fprintf(out, " (%s)\n", s->func ? s->func : "??");
	}
}
