/* Symbolization with libdwfl; see symbols.h. */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "object_open.h"
#include "symbols.h"

struct symbols {
	Dwfl *dwfl;
};

static char *debuginfo_path;
/*
 * Separate debug information by build ID only (under /usr/lib/debug/.build-id, as Debian's
 * -dbgsym packages install it): the standard search also opens the .gnu_debuglink name the
 * object itself gives, beside it, where the traced process could put a FIFO (docs/probes.md,
 * "Trust boundary").
 */
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct symbols *symbols_new(void)
{
	struct symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&offline_callbacks);
	if (!s->dwfl) {
		free(s);
		return NULL;
	}
	return s;
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	dwfl_end(s->dwfl);
	free(s);
}

int symbols_add_object(struct symbols *s, const char *path, const char *file, uint64_t bias)
{
	int fd = object_open(file);
	Dwfl_Module *m;

	if (fd < 0)
		return -1;
	dwfl_report_begin_add(s->dwfl);
	m = dwfl_report_elf(s->dwfl, path, file, fd, bias, false); /* consumes fd on success */
	if (!m)
		close(fd);
	dwfl_report_end(s->dwfl, NULL, NULL);
	return m ? 0 : -1;
}

static bool is_closure_h(const char *file)
{
	const char *base = file ? strrchr(file, '/') : NULL;

	return file && !strcmp(base ? base + 1 : file, "closure.h");
}

/* A file name of the CU's file table, made absolute with the CU's folder when relative. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word index, char *buf, size_t size)
{
	Dwarf_Files *files;
	size_t nfiles;
	const char *name, *dir;
	Dwarf_Attribute attr;

	if (dwarf_getsrcfiles(cu, &files, &nfiles) || index >= nfiles)
		return NULL;
	name = dwarf_filesrc(files, index, NULL, NULL);
	if (!name || name[0] == '/')
		return name;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir)
		return name;
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The innermost function scope in scopes[from..n), copied to *fn. */
static bool first_function(Dwarf_Die *scopes, int from, int n, Dwarf_Die *fn)
{
	for (int i = from; i < n; i++) {
		if (is_function(&scopes[i])) {
			*fn = scopes[i];
			return true;
		}
	}
	return false;
}

/* The function whose code holds the scopes: the first subprogram outward (not an inlined one). */
static bool physical_function(Dwarf_Die *scopes, int n, Dwarf_Die *fn)
{
	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*fn = scopes[i];
			return true;
		}
	}
	return false;
}

/*
 * DWARF view of addr: the innermost function and line. At a function's entry (entry: a
 * continuation or a destructor, not a call site) the function is the one that starts there, not
 * an inlined callee whose code happens to come first. When that line is inside closure.h (a
 * fast path inlined into the user's code), step out through the inlined instances, each time to
 * its call site (DW_AT_call_file, DW_AT_call_line) and the function that physically contains it
 * (dwarf_getscopes_die: dwarf_getscopes would continue into the inline's abstract definition),
 * until the line is the user's.
 */
static void resolve_dwarf(Dwfl_Module *m, Dwarf_Addr addr, bool entry, struct sym_info *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, addr, &bias), *scopes = NULL, fn;
	Dwfl_Line *line = dwfl_module_getsrc(m, addr);
	int n, lineno = 0;
	const char *file = NULL;
	bool have_fn;

	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!cu)
		goto done;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	have_fn = n > 0 &&
		  (entry ? physical_function(scopes, n, &fn) : first_function(scopes, 0, n, &fn));
	free(scopes);
	while (have_fn && is_closure_h(file) && dwarf_tag(&fn) == DW_TAG_inlined_subroutine) {
		Dwarf_Attribute attr;
		Dwarf_Word call_file, call_line;
		const char *caller;
		Dwarf_Die *outer = NULL;

		if (dwarf_formudata(dwarf_attr(&fn, DW_AT_call_file, &attr), &call_file) ||
		    dwarf_formudata(dwarf_attr(&fn, DW_AT_call_line, &attr), &call_line) ||
		    !(caller = cu_file(cu, call_file, out->buf, sizeof(out->buf))))
			break;
		file = caller;
		lineno = (int)call_line;
		n = dwarf_getscopes_die(&fn, &outer);
		have_fn = n > 1 && first_function(outer, 1, n, &fn);
		free(outer);
	}
	if (have_fn)
		out->func = dwarf_diename(&fn);
done:
	out->file = file;
	out->line = file ? lineno : 0;
	/* Where the CU was compiled: the file is shown relative to the folder the two share
	 * (viz/source_path.h), the same from any checkout. */
	if (file && cu) {
		Dwarf_Attribute attr;

		out->dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	}
}

bool symbols_resolve(struct symbols *s, uint64_t addr, struct sym_info *out)
{
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
	GElf_Off off;
	GElf_Sym sym;
	const char *elf_name;

	out->obj = out->func = out->file = out->dir = NULL;
	out->line = 0;
	if (!m)
		return false;
	out->obj = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	elf_name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	resolve_dwarf(m, addr, elf_name && !off && GELF_ST_TYPE(sym.st_info) == STT_FUNC, out);
	if (!out->func)
		out->func = elf_name;
	return true;
}
