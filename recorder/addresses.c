/*
 * The traced process's objects, learnt from its maps and closure:module records, and the
 * addresses the events name: each resolved once, while the process lives, into a sym record.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"
#include "proc_mem.h"
#include "symbols.h"
#include "trace_writer.h"

/* Inserts a; false when it was already there. */
static bool seen_insert(struct session *s, uint64_t a)
{
	bool added;

	hashmap_put(&s->addr.seen, a, 0, &added);
	return added;
}

static bool resolve_and_write(struct session *s, uint64_t addr)
{
	struct sym_info info;

	if (!symbols_resolve(s->addr.syms, addr, &info))
		return false;
	if (s->out.file)
		trace_write_sym(s->out.file, addr, &info);
	if (s->opts->consumer && s->opts->consumer->sym)
		s->opts->consumer->sym(s->opts->consumer_ctx, addr, &info);
	return true;
}

void session_note_address(struct session *s, uint64_t addr)
{
	if (!addr || !seen_insert(s, addr) || resolve_and_write(s, addr))
		return;
	if (s->addr.n_pending == s->addr.pending_cap) {
		size_t cap = s->addr.pending_cap ? s->addr.pending_cap * 2 : 64;
		uint64_t *v = realloc(s->addr.pending, cap * sizeof(*v));

		if (!v)
			return;
		s->addr.pending = v;
		s->addr.pending_cap = cap;
	}
	s->addr.pending[s->addr.n_pending++] = addr;
}

void session_retry_pending(struct session *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->addr.n_pending; i++)
		if (!resolve_and_write(s, s->addr.pending[i]))
			s->addr.pending[kept++] = s->addr.pending[i];
	s->addr.n_pending = kept;
}

/* --- objects --- */

/* Makes the objects from index first on known: symbols, a module record, their probes. */
static void learn_objects(struct session *s, size_t first)
{
	for (size_t i = first; i < s->addr.objects.n; i++)
		if (s->addr.objects.v[i].elf && s->addr.objects.v[i].has_probes && s->skel)
			session_detect_batch(s, s->addr.objects.v[i].file);
	for (size_t i = first; i < s->addr.objects.n; i++) {
		struct object *o = &s->addr.objects.v[i];

		if (!o->elf)
			continue;
		symbols_add_object(s->addr.syms, o->path, o->file, o->bias);
		if (s->out.file) {
			char id[OBJECT_BUILD_ID_MAX];

			trace_write_module(s->out.file, o->path, o->bias,
					   object_build_id(o->file, id, sizeof(id)));
		}
		if (o->has_probes && s->skel)
			session_attach_path(s, o->file);
	}
	if (first < s->addr.objects.n)
		session_retry_pending(s);
}

/* Whether the process runs s->exe yet (a launched child is our own image until it execs). */
static bool runs_exe(struct session *s)
{
	char exe[4096];

	if (!s->exe)
		return true;
	return proc_exe(s->pid, exe, sizeof(exe)) && !strcmp(exe, s->exe);
}

void session_scan(struct session *s)
{
	size_t first = s->addr.objects.n;

	if (!runs_exe(s))
		return;

	if (objects_scan_maps(&s->addr.objects, s->pid) > 0)
		learn_objects(s, first);
}

/* Objects known to the recorder at most: a process maps a few dozen; beyond, refused. */
#define OBJECTS_MAX 4096
/* The maps are read again for module records at most this often (a flood of them). */
#define MODULE_MAPS_GAP_NS 1000000ull
/*
 * Module records refused at the cost of a realpath and a stat each (about 125 us here); past this
 * many, one that names no known object is refused without them. A process that fires new paths
 * as fast as it can (2 million distinct ones, tests/suites/trust) queued minutes of them before the
 * recorder's end, which waited for them all; a real program's records name its objects, each
 * known after its first.
 */
#define MODULES_EXAMINED_REFUSED 4096

/* Whether the file (its name, or its identity) is a known object at bias. */
static bool known_object(const struct objects *o, const char *path, struct file_id id,
			 uint64_t bias)
{
	for (size_t k = 0; k < o->n; k++)
		if ((id.ino && o->v[k].id.ino == id.ino && o->v[k].id.dev == id.dev) ||
		    !strcmp(o->v[k].path, path))
			if (o->v[k].bias == bias || !o->v[k].elf)
				return true;
	return false;
}

/* Whether user uid may read the file st describes (by its mode bits; root may read anything). */
static bool readable_by(const struct stat *st, uint32_t uid)
{
	return !uid || (st->st_uid == uid ? st->st_mode & S_IRUSR : st->st_mode & S_IROTH);
}

/*
 * Whether a module record is believed: a regular file that the process maps (its maps, read at
 * most every MODULE_MAPS_GAP_NS), or, once the process is gone, one its user may read (what it
 * could have read itself); up to OBJECTS_MAX objects.
 */
static bool module_believed(struct session *s, const struct session_module *m, const char *path,
			    struct file_id id, const struct stat *st)
{
	uint32_t pid = s->procs.follow ? procset_process_of(s, m->tid) : (uint32_t)s->pid;
	int mapped;

	if (known_object(&s->addr.objects, path, id, m->base))
		return true;
	if (s->addr.objects.n >= OBJECTS_MAX)
		return false;
	if (!m->tid) /* the in-process sink: read as the process's user, after it */
		return true;
	mapped = objects_mapped(&s->addr.module_maps, (pid_t)pid, m->ts, recorder_now_ns(),
				MODULE_MAPS_GAP_NS, path, id);
	return mapped == 1 || (mapped < 0 && readable_by(st, m->uid));
}

/*
 * A closure:module record. Refused (and counted) unless believed, so that a process cannot make
 * the recorder open a FIFO, read a file it may not read, or keep a million objects.
 */
void session_on_module(struct session *s, const struct session_module *m)
{
	size_t first = s->addr.objects.n;
	const char *path = m->path;
	char *canonical, *file = NULL;
	struct stat st;
	bool added;

	if (path[0] != '/')
		return;
	if (s->addr.modules_refused >= MODULES_EXAMINED_REFUSED &&
	    !known_object(&s->addr.objects, path, (struct file_id){0, 0}, m->base)) {
		s->addr.modules_refused++;
		return;
	}
	/*
	 * The loader's name may be a symlink (libclosure.so.0): the trace names the file, as the
	 * maps do. Another mount namespace's path cannot be resolved here; objects_add still
	 * knows the file by its identity.
	 */
	canonical = s->addr.objects.root[0] ? NULL : realpath(path, NULL);
	if (canonical)
		path = canonical;
	if (asprintf(&file, "%s%s", s->addr.objects.root, path) < 0 || stat(file, &st) ||
	    !S_ISREG(st.st_mode) ||
	    !module_believed(s, m, path, (struct file_id){st.st_dev, st.st_ino}, &st)) {
		s->addr.modules_refused++;
	} else if (objects_add(&s->addr.objects, path, m->base, &added) >= 0 && added) {
		learn_objects(s, first);
	}
	free(file);
	free(canonical);
}
