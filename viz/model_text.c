/* Symbols and the text helpers every presentation uses (model.h). */
#include "model_internal.h"
#include "source_path.h"
#include "trace_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- symbols ---- */

void model_on_sym(void *ctx, const struct trace_sym *sym)
{
	struct model *m = ctx;
	struct model_sym *s;
	/* DWARF names a file relative to the folder it was compiled in, or whole: made whole, so
	 * that both forms of one file are one name (source_path.h). */
	char *whole = sym->dir ? source_path_join(sym->dir, sym->file) : NULL;
	const char *file = whole ? whole : sym->file;

	if (!sym->addr) {
		free(whole);
		return; /* no code lives at 0: nothing would ask */
	}
	s = hashmap_put(&m->syms, sym->addr, 0, NULL);
	s->addr = sym->addr;
	free(s->func);
	free(s->file);
	free(s->file_bytes);
	/* Shown as every presentation shows names (trace_text.h): nothing acts on a terminal. */
	s->func = text_visible_dup(sym->func);
	s->file = text_visible_dup(file);
	s->file_bytes = s->file && strcmp(s->file, file) ? strdup(file) : NULL;
	s->line = sym->line;
	s->root = s->file && sym->dir ? source_root_shown(s->file, sym->dir) : MODEL_ROOT_SHARED;
	m->shared_root_known = false; /* this symbol may have been one of them, or be one now */
	if (hashmap_get(&m->kind_addrs, sym->addr, 0))
		m->kind_names_stale = true; /* a kind's name changes with it */
	free(whole);
}

struct model_name {
	char text[TRACE_NAME_MAX * TEXT_ESCAPE_MAX + 1]; /* made visible: a byte may take six */
};

void model_on_name(void *ctx, const struct trace_name *name)
{
	struct model *m = ctx;
	struct model_name *n =
		hashmap_put(&m->names[name->kind], name->id, (uint64_t)name->pid, NULL);

	text_visible(n->text, sizeof(n->text), name->name);
}

void model_on_header(void *ctx, const struct trace_info *info)
{
	((struct model *)ctx)->header_pid = info->pid;
}

const char *model_name(const struct model *m, enum trace_name_kind kind, int64_t pid, uint64_t id)
{
	const struct model_name *n = hashmap_get(&m->names[kind], id, (uint64_t)pid);

	/* A trace of one process writes no pid on its records, the events may: either matches. */
	if (!n && pid)
		n = hashmap_get(&m->names[kind], id, 0);
	return n && n->text[0] ? n->text : NULL;
}

const char *model_wq_text(const struct model *m, int64_t pid, uint64_t wq, char *buf, size_t len)
{
	const char *name = model_name(m, TRACE_NAME_WORKQUEUE, pid, wq);

	if (name)
		text_snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "0x%" PRIx64, wq);
	return buf;
}

const struct model_sym *model_sym(struct model *m, uint64_t addr)
{
	return addr ? hashmap_get(&m->syms, addr, 0) : NULL;
}

void model_syms_free(struct model *m)
{
	struct model_sym *s;
	size_t pos = 0;

	while ((s = hashmap_next(&m->syms, &pos, NULL, NULL))) {
		free(s->func);
		free(s->file);
		free(s->file_bytes);
	}
	hashmap_free(&m->syms);
	hashmap_free(&m->kind_names);
	hashmap_free(&m->kind_addrs);
}

/* ---- text ---- */

/* The folder the absolute files of symbols without a compile folder share: their source root. */
static size_t shared_root(struct model *m)
{
	const char *first = NULL;
	const struct model_sym *s;
	size_t pos = 0;

	if (m->shared_root_known)
		return m->shared_root;
	m->shared_root = 0;
	while ((s = hashmap_next(&m->syms, &pos, NULL, NULL))) {
		size_t n;

		if (s->root != MODEL_ROOT_SHARED || !s->file || s->file[0] != '/')
			continue;
		n = source_common_dir(first ? first : s->file, s->file);
		if (!first || n < m->shared_root)
			m->shared_root = n;
		first = first ? first : s->file;
	}
	m->shared_root_known = true;
	return m->shared_root;
}

size_t model_sym_root(struct model *m, const struct model_sym *s)
{
	if (s->root != MODEL_ROOT_SHARED)
		return s->root;
	return s->file[0] == '/' ? shared_root(m) : 0;
}

const char *model_sym_file(struct model *m, const struct model_sym *s)
{
	return source_path_shown(s->file, model_sym_root(m, s));
}

const char *model_source_root(struct model *m, size_t *len)
{
	const char *root = NULL;
	const struct model_sym *s;
	size_t pos = 0;

	*len = 0;
	while ((s = hashmap_next(&m->syms, &pos, NULL, NULL))) {
		size_t n;

		if (!s->file || s->file[0] != '/')
			continue;
		n = model_sym_root(m, s);
		if (!n || (root && (n != *len || memcmp(root, s->file, n))))
			return NULL;
		root = s->file;
		*len = n;
	}
	return root;
}

const char *model_site_text(struct model *m, uint64_t ip, char *buf, size_t len)
{
	const struct model_sym *s = model_sym(m, ip);

	if (!ip)
		snprintf(buf, len, "(unknown site)");
	else if (s && s->file && s->line > 0)
		text_snprintf(buf, len, "%s:%ld", model_sym_file(m, s), s->line);
	else if (s && s->file)
		text_snprintf(buf, len, "%s", model_sym_file(m, s));
	else if (s && s->func)
		text_snprintf(buf, len, "%s", s->func);
	else
		snprintf(buf, len, "0x%" PRIx64, ip);
	return buf;
}

const char *model_func_text(struct model *m, uint64_t addr, char *buf, size_t len)
{
	const struct model_sym *s = model_sym(m, addr);

	if (!addr)
		snprintf(buf, len, "-");
	else if (s && s->func)
		text_snprintf(buf, len, "%s", s->func);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

const char *model_life_name(const struct model_life *l, char *buf, size_t len)
{
	/* Lives of several processes share addresses: the process is part of every name. */
	if (l->pid)
		snprintf(buf, len, "%lld:0x%" PRIx64 "#%u", (long long)l->pid, l->addr, l->nth);
	else /* neither the events nor the header name a process */
		snprintf(buf, len, "0x%" PRIx64 "#%u", l->addr, l->nth);
	return buf;
}

/* "init_func -> continuation", "init_func" (fn 0), "-> continuation" (init_ip 0) */
static const char *plain_kind_name(struct model *m, uint64_t init_ip, uint64_t fn, char *buf,
				   size_t len)
{
	char init[512], cont[512];

	if (init_ip && fn)
		text_snprintf(buf, len, "%s -> %s", model_func_text(m, init_ip, init, sizeof(init)),
			      model_func_text(m, fn, cont, sizeof(cont)));
	else if (init_ip)
		model_func_text(m, init_ip, buf, len);
	else
		text_snprintf(buf, len, "-> %s", model_func_text(m, fn, cont, sizeof(cont)));
	return buf;
}

struct kind_name {
	uint64_t site; /* the hash of the first kind's init site, as shown */
	bool shared;   /* a kind of another init site has the name too */
};

/* FNV-1a: a name's key in kind_names. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void note_kind(struct model *m, const struct model_kind *k)
{
	char name[1100], site[512];
	struct kind_name *n;
	uint64_t at;
	bool added;

	if (!k->init_ip)
		return; /* no init site to tell it apart by */
	/* By the site as shown: the processes of one trace load a program at their own addresses */
	at = name_hash(model_site_text(m, k->init_ip, site, sizeof(site)));
	n = hashmap_put(&m->kind_names,
			name_hash(plain_kind_name(m, k->init_ip, k->fn, name, sizeof(name))), 0,
			&added);
	if (added)
		n->site = at;
	else if (n->site != at)
		n->shared = true;
	hashmap_put(&m->kind_addrs, k->init_ip, 0, NULL);
	if (k->fn)
		hashmap_put(&m->kind_addrs, k->fn, 0, NULL);
}

/*
 * Whether a kind of another init site has this name: the kinds made since the last call are
 * added (each once: kinds are never freed before the model), all again after one of their symbols
 * changed.
 */
static bool name_shared(struct model *m, const char *name)
{
	const struct kind_name *n;

	if (m->kind_names_stale || !m->kind_names.value_size) {
		hashmap_free(&m->kind_names);
		hashmap_free(&m->kind_addrs);
		hashmap_init(&m->kind_names, sizeof(struct kind_name));
		hashmap_init(&m->kind_addrs, 1);
		m->kind_names_upto = NULL;
		m->kind_names_stale = false;
	}
	for (const struct model_kind *k = m->kinds; k && k != m->kind_names_upto; k = k->next)
		note_kind(m, k);
	m->kind_names_upto = m->kinds;
	n = hashmap_get(&m->kind_names, name_hash(name), 0);
	return n && n->shared;
}

const char *model_kind_name(struct model *m, uint64_t init_ip, uint64_t fn, char *buf, size_t len)
{
	char site[512];
	size_t used;

	plain_kind_name(m, init_ip, fn, buf, len);
	/* Two kinds of one name (two closures initialised in one function, continuing alike) are
	 * told apart by their init sites. */
	if (init_ip && name_shared(m, buf) && (used = strlen(buf)) < len)
		text_snprintf(buf + used, len - used, " (%s)",
			      model_site_text(m, init_ip, site, sizeof(site)));
	return buf;
}

const char *model_life_function(struct model *m, const struct model_life *l, char *buf, size_t len)
{
	/* The kind's, once it is known: the same words as the kinds table. */
	uint64_t init_ip = l->kind ? l->kind->init_ip : l->init_ip;
	uint64_t fn = l->kind ? l->kind->fn : l->first_fn;

	if (!init_ip && !fn && l->fn && l->how != TRACE_HOW_DESTRUCTOR)
		fn = l->fn; /* created before recording: what it does is all that is known */
	if (init_ip || fn)
		return model_kind_name(m, init_ip, fn, buf, len);
	if (l->first_ip && model_sym(m, l->first_ip) && model_sym(m, l->first_ip)->func)
		text_snprintf(buf, len, "? (first seen in %s)", model_sym(m, l->first_ip)->func);
	else
		snprintf(buf, len, "(unknown function)");
	return buf;
}

const char *model_origin_text(const struct model_life *l, char *buf, size_t len)
{
	if (l->no_init)
		snprintf(buf, len, "no init: used after #%u finished", l->nth - 1);
	else
		snprintf(buf, len, "created before recording");
	return buf;
}

const char *model_duration_text(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f µs", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	return buf;
}

const char *model_state_text(struct model *m, const struct model_life *l, char *buf, size_t len)
{
	char fn[256], site[512];

	switch (l->state) {
	case MODEL_FINISHED:
		snprintf(buf, len,
			 l->frame_left		      ? "finished (its frame was left)"
			 : l->stack && !l->release_ip ? "finished (closure_sync returned)"
						      : "finished");
		break;
	case MODEL_DESTROYED:
		snprintf(buf, len, "destroyed");
		break;
	case MODEL_SYNCING:
		text_snprintf(buf, len, "inside closure_sync at %s",
			      model_site_text(m, l->sync_ip, site, sizeof(site)));
		break;
	case MODEL_CONTINUING:
		if (l->how == TRACE_HOW_RETURN || (!l->fn && l->how != TRACE_HOW_DESTRUCTOR))
			snprintf(buf, len, "returning (waits for its references)");
		else if (l->how == TRACE_HOW_DESTRUCTOR)
			text_snprintf(buf, len, "returning with destructor %s",
				      model_func_text(m, l->fn, fn, sizeof(fn)));
		else if (l->wq)
			text_snprintf(buf, len, "continuing at %s on wq %s",
				      model_func_text(m, l->fn, fn, sizeof(fn)),
				      model_wq_text(m, l->pid, l->wq, site, sizeof(site)));
		else
			text_snprintf(buf, len, "continuing at %s",
				      model_func_text(m, l->fn, fn, sizeof(fn)));
		break;
	case MODEL_RUNNING:
		if (l->sync_timed_out)
			text_snprintf(buf, len, "running: closure_sync at %s timed out",
				      model_site_text(m, l->sync_ip, site, sizeof(site)));
		else
			snprintf(buf, len, "running");
		break;
	case MODEL_UNKNOWN:
		/* A closure alive at attach and not running then slept in closure_sync or waited
		 * for its references; the registry does not say which continuation it was given. */
		snprintf(buf, len,
			 !l->snapshot			  ? "state unknown (first seen mid-life)"
			 : l->flags & TRACE_FLAG_SLEEPING ? "asleep in closure_sync at attach"
							  : "waiting for its references at attach");
		break;
	}
	if (l->on_waitlist && !l->finished) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, ", waiting on waitlist 0x%" PRIx64, l->waitlist);
	}
	return buf;
}

/* "func -> cont (file:line)" */
const char *model_kind_text(struct model *m, const struct model_kind *k, char *buf, size_t len)
{
	char name[1100], site[512];

	if (!k->init_ip && !k->fn)
		snprintf(buf, len, "(no init in the trace)");
	else if (!k->init_ip)
		text_snprintf(buf, len, "%s (no init in the trace)",
			      model_kind_name(m, 0, k->fn, name, sizeof(name)));
	else /* the init site told once, shared name or not */
		text_snprintf(buf, len, "%s (%s)",
			      plain_kind_name(m, k->init_ip, k->fn, name, sizeof(name)),
			      model_site_text(m, k->init_ip, site, sizeof(site)));
	return buf;
}

const char *model_flags_text(unsigned flags, char *buf)
{
	char *p = buf;

#define FLAG_LETTER(name, bit, letter)                                                             \
	if (flags & TRACE_FLAG_##name)                                                             \
		*p++ = letter;
	CLOSURE_FLAG_LIST(FLAG_LETTER) /* the letters of the probe contract, in its order */
#undef FLAG_LETTER
	if (p == buf)
		*p++ = '-';
	*p = 0;
	return buf;
}
