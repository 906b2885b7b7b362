/*
 * The verdicts' words (leaks.h): one word per closure, the same in every output, so that report,
 * report --json, explain, graph, timeline, check and the fleet export say one thing of it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "leaks.h"

static const struct {
	const char *text, *plural, *caps, *key;
} words[LEAKS_NR_WORDS] = {
	[LEAKS_WORD_FINISHED] = {"finished", "finished", "FINISHED", "finished"},
	[LEAKS_WORD_SET_ASIDE] = {"set aside", "set aside", "SET ASIDE", "set_aside"},
	[LEAKS_WORD_HANG_ROOT] = {"root of a hang", "roots of a hang", "ROOT OF A HANG",
				  "hang_root"},
	[LEAKS_WORD_STUCK] = {"stuck", "stuck", "STUCK", "stuck"},
	[LEAKS_WORD_LEAKED] = {"leaked", "leaked", "LEAKED", "leaked"},
	[LEAKS_WORD_KEPT_ALIVE] = {"kept alive", "kept alive", "KEPT ALIVE", "kept_alive"},
	[LEAKS_WORD_SUSPECT] = {"suspect", "suspects", "SUSPECT", "suspect"},
	[LEAKS_WORD_IN_FLIGHT] = {"in flight", "in flight", "IN FLIGHT", "in_flight"},
};

enum leaks_word leaks_word(const struct model_life *l)
{
	if (l->finished)
		return LEAKS_WORD_FINISHED;
	if (l->verdict == VERDICT_LATE)
		return LEAKS_WORD_SET_ASIDE;
	/* What the stuck wait behind, then the stuck (check's errors say so), then the rest. */
	if (l->hang_root)
		return LEAKS_WORD_HANG_ROOT;
	if (l->stuck)
		return LEAKS_WORD_STUCK;
	switch (l->verdict) {
	case VERDICT_LEAKED:
		return LEAKS_WORD_LEAKED;
	case VERDICT_KEPT_ALIVE:
		return LEAKS_WORD_KEPT_ALIVE;
	case VERDICT_SUSPECT:
		return LEAKS_WORD_SUSPECT;
	default:
		return LEAKS_WORD_IN_FLIGHT;
	}
}

const char *leaks_word_text(enum leaks_word w)
{
	return words[w].text;
}

const char *leaks_word_caps(enum leaks_word w)
{
	return words[w].caps;
}

const char *leaks_word_key(enum leaks_word w)
{
	return words[w].key;
}

const char *leaks_verdict_word(const struct model_life *l)
{
	return words[leaks_word(l)].text;
}

const char *leaks_word_count(enum leaks_word w, uint64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " %s", n, n == 1 ? words[w].text : words[w].plural);
	return buf;
}
