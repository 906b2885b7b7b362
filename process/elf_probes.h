/* The closure probes an ELF file carries (.note.stapsdt), and the libraries it needs. */
#ifndef CLOSURETRACE_ELF_PROBES_H
#define CLOSURETRACE_ELF_PROBES_H

#include <stddef.h>
#include <stdint.h>

/* One probe name of provider closure in one object: how many sites, and the first site's args. */
struct elf_probe {
	char name[32];
	unsigned sites;
	uint64_t first_pc;  /* link-time address of the first site */
	uint64_t semaphore; /* link-time address of its semaphore, 0 for none */
	char args[256];	    /* the first site's argument spec, e.g. "8@%rdi -4@%eax" */
};

struct elf_probes {
	struct elf_probe *probes; /* owned; free with elf_probes_free */
	size_t n;
};

/*
 * Reads the closure probes of the ELF file at path into *out (zero of them when it has none).
 * Returns 0, or -1 when the file cannot be read as ELF.
 */
int elf_probes_read(const char *path, struct elf_probes *out);
void elf_probes_free(struct elf_probes *p);

/* One probe site, located as uprobes want it: by file offset. */
struct elf_site {
	char name[32];
	uint64_t offset;  /* file offset of the probe's instruction */
	uint64_t ref_ctr; /* file offset of its semaphore, 0 for none */
	char args[256];	  /* argument spec, e.g. "8@%rdi -4@$0" */
};

/* Every closure probe site of the file. Returns how many (*sites malloc'ed), or -1. */
long elf_probe_sites(const char *path, struct elf_site **sites);

/* The file offset of the function name in the ELF file at path (its symbol tables), or 0. */
uint64_t elf_symbol_offset(const char *path, const char *name);

/*
 * The link-time address of the data object name defined in the ELF file at path (its .dynsym,
 * else its .symtab), or 0.
 */
uint64_t elf_data_symbol(const char *path, const char *name);

/* The program interpreter (PT_INTERP: the dynamic loader's path), malloc'ed; or NULL. */
char *elf_interpreter(const char *path);

/* Whether the file is a 64-bit ELF object. */
int elf_is_elf(const char *path);

/* Whether the file carries at least one closure probe (a cheap wrapper over elf_probes_read). */
int elf_has_closure_probes(const char *path);

/*
 * The shared objects the dynamic loader would load for the executable at path, resolved as ld.so
 * does (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH with $ORIGIN, then the system folders), the
 * executable first. Returns the number of paths stored in paths[] (each malloc'ed, caller frees),
 * at most max.
 */
size_t elf_load_order(const char *path, char **paths, size_t max);

#endif
