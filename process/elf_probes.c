/*
 * Reading ELF files with libelf: the SystemTap SDT notes (provider "closure") that libbpf attaches
 * to, and the DT_NEEDED chain, so that a command's libraries can be found before it runs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "elf_probes.h"
#include "ld_search.h"
#include "object_open.h"

#define NT_STAPSDT 3
#define LD_SO_CACHE "/etc/ld.so.cache"
#define LD_SO_CONF  "/etc/ld.so.conf"

static Elf *elf_open(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = object_open(path);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

/* Called for each closure SDT note: pc and semaphore (link-time, prelink-adjusted), name, args. */
typedef void note_fn(void *arg, Elf *e, uint64_t pc, uint64_t semaphore, const char *name,
		     const char *args);

/* One SDT note: pc, base, semaphore (8 bytes each), then provider, name and args strings. */
static void parse_note(const char *desc, size_t size, uint64_t base_addr, Elf *e, note_fn *fn,
		       void *arg)
{
	const char *provider, *name, *args, *end = desc + size;
	uint64_t addr[3];

	if (size < sizeof(addr) + 3)
		return;
	memcpy(addr, desc, sizeof(addr));
	provider = desc + sizeof(addr);
	/* Test for NULL before stepping past the NUL: incrementing a null pointer is undefined. */
	name = memchr(provider, 0, end - provider);
	if (!name || ++name >= end)
		return;
	args = memchr(name, 0, end - name);
	if (!args || ++args > end || !memchr(args, 0, end - args))
		return;
	if (strcmp(provider, "closure"))
		return;
	/* A prelinked object moved .stapsdt.base; the note recorded where it was. */
	if (base_addr && addr[1])
		addr[0] += base_addr - addr[1];
	fn(arg, e, addr[0], addr[2], name, args);
}

static int walk_notes(const char *path, note_fn *fn, void *arg)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t base_addr = 0;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -1;
	if (elf_getshdrstrndx(e, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, ".stapsdt.base"))
			base_addr = sh.sh_addr;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_STAPSDT &&
			    !strncmp((char *)data->d_buf + name_off, "stapsdt", nh.n_namesz))
				parse_note((char *)data->d_buf + desc_off, nh.n_descsz, base_addr,
					   e, fn, arg);
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

static struct elf_probe *probe_slot(struct elf_probes *out, const char *name)
{
	struct elf_probe *p;

	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->probes[i].name, name))
			return &out->probes[i];
	p = realloc(out->probes, (out->n + 1) * sizeof(*p));
	if (!p)
		return NULL;
	out->probes = p;
	p = &out->probes[out->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	return p;
}

static void add_probe(void *arg, Elf *e, uint64_t pc, uint64_t semaphore, const char *name,
		      const char *args)
{
	struct elf_probe *p = probe_slot(arg, name);

	(void)e;
	if (p && !p->sites++) {
		p->first_pc = pc;
		p->semaphore = semaphore;
		snprintf(p->args, sizeof(p->args), "%s", args);
	}
}

int elf_probes_read(const char *path, struct elf_probes *out)
{
	memset(out, 0, sizeof(*out));
	return walk_notes(path, add_probe, out);
}

/* The file offset of a link-time address, through the PT_LOAD segment holding it (0: none). */
static uint64_t file_offset(Elf *e, uint64_t vaddr)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/*
 * The value of the defined symbol name of type type (STT_FUNC, STT_OBJECT) in e: .dynsym first
 * (what a stripped object keeps), then .symtab. 0 when none.
 */
static uint64_t symbol_value(Elf *e, const char *name, int type)
{
	uint32_t tables[] = {SHT_DYNSYM, SHT_SYMTAB};

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != tables[t] || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *sname;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != type || !sym.st_value ||
				    sym.st_shndx == SHN_UNDEF)
					continue;
				sname = elf_strptr(e, sh.sh_link, sym.st_name);
				if (sname && !strcmp(sname, name))
					return sym.st_value;
			}
		}
	}
	return 0;
}

uint64_t elf_symbol_offset(const char *path, const char *name)
{
	uint64_t found = 0, value;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return 0;
	value = symbol_value(e, name, STT_FUNC);
	if (value)
		found = file_offset(e, value);
	elf_end(e);
	close(fd);
	return found;
}

uint64_t elf_data_symbol(const char *path, const char *name)
{
	uint64_t value;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return 0;
	value = symbol_value(e, name, STT_OBJECT);
	elf_end(e);
	close(fd);
	return value;
}

char *elf_interpreter(const char *path)
{
	char *interp = NULL;
	size_t nph, size;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return NULL;
	for (size_t i = 0; !interp && !elf_getphdrnum(e, &nph) && i < nph; i++) {
		GElf_Phdr ph;
		const char *raw;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		raw = elf_rawfile(e, &size);
		if (raw && ph.p_offset + ph.p_filesz <= size && ph.p_filesz &&
		    memchr(raw + ph.p_offset, 0, ph.p_filesz))
			interp = strdup(raw + ph.p_offset);
	}
	elf_end(e);
	close(fd);
	return interp;
}

struct site_list {
	struct elf_site *v;
	size_t n, cap;
	int failed;
};

static void add_site(void *arg, Elf *e, uint64_t pc, uint64_t semaphore, const char *name,
		     const char *args)
{
	struct site_list *l = arg;
	struct elf_site *s;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct elf_site *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->failed = 1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	s = &l->v[l->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->args, sizeof(s->args), "%s", args);
	s->offset = file_offset(e, pc);
	s->ref_ctr = semaphore ? file_offset(e, semaphore) : 0;
	if (s->offset)
		l->n++;
}

long elf_probe_sites(const char *path, struct elf_site **sites)
{
	struct site_list l = {0};

	*sites = NULL;
	if (walk_notes(path, add_site, &l) || l.failed) {
		free(l.v);
		return -1;
	}
	*sites = l.v;
	return (long)l.n;
}

void elf_probes_free(struct elf_probes *p)
{
	free(p->probes);
	p->probes = NULL;
	p->n = 0;
}

int elf_is_elf(const char *path)
{
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return 0;
	elf_end(e);
	close(fd);
	return 1;
}

int elf_has_closure_probes(const char *path)
{
	struct elf_probes p;
	int has = !elf_probes_read(path, &p) && p.n > 0;

	elf_probes_free(&p);
	return has;
}

/* The dynamic section's strings of interest. */
struct dyn_info {
	char *needed[64];
	size_t n_needed;
	char *rpath, *runpath; /* NULL when absent */
};

static void dyn_info_free(struct dyn_info *d)
{
	for (size_t i = 0; i < d->n_needed; i++)
		free(d->needed[i]);
	free(d->rpath);
	free(d->runpath);
}

static int dyn_info_read(const char *path, struct dyn_info *d)
{
	Elf_Scn *scn = NULL;
	int fd;
	Elf *e = elf_open(path, &fd);

	memset(d, 0, sizeof(*d));
	if (!e)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 16);
		     i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && d->n_needed < 64)
				d->needed[d->n_needed++] = strdup(s);
			else if (dyn.d_tag == DT_RPATH && !d->rpath)
				d->rpath = strdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !d->runpath)
				d->runpath = strdup(s);
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* Looks for name in a colon-separated list of folders, expanding $ORIGIN to origin. */
static char *search_path(const char *list, const char *origin, const char *name)
{
	char *copy, *dir, *save = NULL, buf[PATH_MAX], *found = NULL;

	if (!list || !*list)
		return NULL;
	copy = strdup(list);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		const char *rest = NULL;

		if (!strncmp(dir, "$ORIGIN", 7))
			rest = dir + 7;
		else if (!strncmp(dir, "${ORIGIN}", 9))
			rest = dir + 9;
		if (rest)
			snprintf(buf, sizeof(buf), "%s%s/%s", origin, rest, name);
		else
			snprintf(buf, sizeof(buf), "%s/%s", dir, name);
		if (access(buf, R_OK) == 0)
			found = realpath(buf, NULL);
	}
	free(copy);
	return found;
}

/* The folders ld.so searches after its cache (its built-in list). */
static const char system_dirs[] =
	"/usr/local/lib/" CLOSURETRACE_MULTIARCH ":/usr/local/lib:"
	"/lib/" CLOSURETRACE_MULTIARCH ":/usr/lib/" CLOSURETRACE_MULTIARCH ":/lib64:/usr/lib64:"
	"/lib:/usr/lib";

/* /etc/ld.so.conf's folders, read once: for a library installed there before ldconfig ran. */
static const char *conf_dirs(void)
{
	static char *dirs;
	static int read;

	if (!read) {
		dirs = ld_conf_dirs(LD_SO_CONF);
		read = 1;
	}
	return dirs;
}

/*
 * As ld.so(8) searches: DT_RPATH (the object's, then the executable's) unless there is a
 * DT_RUNPATH, LD_LIBRARY_PATH, DT_RUNPATH, the cache, the built-in folders; then the folders of
 * /etc/ld.so.conf, for a cache not rebuilt since. exe_rpath: the executable's DT_RPATH, which
 * applies to every object; $ORIGIN there is exe_dir.
 */
static char *resolve_needed(const char *name, const struct dyn_info *d, const char *origin,
			    const char *exe_rpath, const char *exe_dir)
{
	char *found = NULL;

	if (strchr(name, '/'))
		return realpath(name, NULL);
	if (!d->runpath) {
		found = search_path(d->rpath, origin, name);
		if (!found)
			found = search_path(exe_rpath, exe_dir, name);
	}
	if (!found)
		found = search_path(getenv("LD_LIBRARY_PATH"), origin, name);
	if (!found)
		found = search_path(d->runpath, origin, name);
	if (!found)
		found = ld_cache_find(LD_SO_CACHE, name);
	if (!found)
		found = search_path(system_dirs, origin, name);
	if (!found)
		found = search_path(conf_dirs(), origin, name);
	return found;
}

static int seen(char **paths, size_t n, const char *p)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(paths[i], p))
			return 1;
	return 0;
}

size_t elf_load_order(const char *path, char **paths, size_t max)
{
	char *exe_rpath = NULL, *exe_copy;
	const char *exe_dir;
	size_t n = 0;

	if (!max || !(paths[0] = realpath(path, NULL)))
		return 0;
	n = 1;
	exe_copy = strdup(paths[0]);
	if (!exe_copy)
		return n;
	exe_dir = dirname(exe_copy);
	/* Breadth first, as ld.so loads them. */
	for (size_t i = 0; i < n; i++) {
		struct dyn_info d;
		char *dir_copy = strdup(paths[i]);
		const char *origin = dirname(dir_copy);

		if (dyn_info_read(paths[i], &d)) {
			free(dir_copy);
			continue;
		}
		if (i == 0 && d.rpath && !d.runpath)
			exe_rpath = strdup(d.rpath);
		for (size_t k = 0; k < d.n_needed && n < max; k++) {
			char *lib = resolve_needed(d.needed[k], &d, origin, exe_rpath, exe_dir);

			if (lib && !seen(paths, n, lib))
				paths[n++] = lib;
			else
				free(lib);
		}
		dyn_info_free(&d);
		free(dir_copy);
	}
	free(exe_rpath);
	free(exe_copy);
	return n;
}
