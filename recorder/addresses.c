/*
 * The traced process's objects, learnt from its maps and closure:module records, and the
 * addresses the events name: each resolved once, while the process lives, into a sym record.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"
#include "symbols.h"
#include "trace_writer.h"

/* Inserts a; false when it was already there. */
static bool seen_insert(struct session *s, uint64_t a)
{
	size_t i;

	if (s->seen_n * 2 >= s->seen_cap) {
		size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
		uint64_t *v = calloc(cap, sizeof(*v)), *old = s->seen;

		if (!v)
			return false;
		for (size_t k = 0; k < s->seen_cap; k++) {
			if (!old[k])
				continue;
			for (i = session_hash(old[k]) & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
				;
			v[i] = old[k];
		}
		free(old);
		s->seen = v;
		s->seen_cap = cap;
	}
	for (i = session_hash(a) & (s->seen_cap - 1); s->seen[i]; i = (i + 1) & (s->seen_cap - 1))
		if (s->seen[i] == a)
			return false;
	s->seen[i] = a;
	s->seen_n++;
	return true;
}

static bool resolve_and_write(struct session *s, uint64_t addr)
{
	struct sym_info info;

	if (!symbols_resolve(s->syms, addr, &info))
		return false;
	if (s->out)
		trace_write_sym(s->out, addr, &info);
	return true;
}

void session_note_address(struct session *s, uint64_t addr)
{
	if (!addr || !seen_insert(s, addr) || resolve_and_write(s, addr))
		return;
	if (s->n_pending == s->pending_cap) {
		size_t cap = s->pending_cap ? s->pending_cap * 2 : 64;
		uint64_t *v = realloc(s->pending, cap * sizeof(*v));

		if (!v)
			return;
		s->pending = v;
		s->pending_cap = cap;
	}
	s->pending[s->n_pending++] = addr;
}

void session_retry_pending(struct session *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_pending; i++)
		if (!resolve_and_write(s, s->pending[i]))
			s->pending[kept++] = s->pending[i];
	s->n_pending = kept;
}

/* --- objects --- */

/* Makes the objects from index first on known: symbols, a module record, their probes. */
static void learn_objects(struct session *s, size_t first)
{
	for (size_t i = first; i < s->objects.n; i++)
		if (s->objects.v[i].elf && s->objects.v[i].has_probes && s->skel)
			session_detect_batch(s, s->objects.v[i].file);
	for (size_t i = first; i < s->objects.n; i++) {
		struct object *o = &s->objects.v[i];

		if (!o->elf)
			continue;
		symbols_add_object(s->syms, o->path, o->file, o->bias);
		if (s->out) {
			char id[OBJECT_BUILD_ID_MAX];

			trace_write_module(s->out, o->path, o->bias,
					   object_build_id(o->file, id, sizeof(id)));
		}
		if (o->has_probes && s->skel)
			session_attach_path(s, o->file);
	}
	if (first < s->objects.n)
		session_retry_pending(s);
}

/* Whether the process runs s->exe yet (a launched child is our own image until it execs). */
static bool runs_exe(struct session *s)
{
	char link[64], exe[4096];
	ssize_t n;

	if (!s->exe)
		return true;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		return false;
	exe[n] = '\0';
	return !strcmp(exe, s->exe);
}

void session_scan(struct session *s)
{
	size_t first = s->objects.n;

	if (!runs_exe(s))
		return;

	if (objects_scan_maps(&s->objects, s->pid) > 0)
		learn_objects(s, first);
}

void session_on_module(struct session *s, const char *path, uint64_t base)
{
	size_t first = s->objects.n;
	char *canonical;
	bool added;

	if (path[0] != '/')
		return;
	/*
	 * The loader's name may be a symlink (libclosure.so.0): the trace names the file, as the
	 * maps do. Another mount namespace's path cannot be resolved here; objects_add still
	 * knows the file by its identity.
	 */
	canonical = s->objects.root[0] ? NULL : realpath(path, NULL);
	if (objects_add(&s->objects, canonical ? canonical : path, base, &added) >= 0 && added)
		learn_objects(s, first);
	free(canonical);
}
