/*
 * The ELF objects of the traced process and their load biases, learnt from /proc/PID/maps while
 * the process lives and from closure:module events (which still arrive for a process that exits
 * before its maps could be read).
 */
#ifndef CLOSURETRACE_OBJECTS_H
#define CLOSURETRACE_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "object_open.h"

/* A file by identity: the names of one file differ (symlinks, /proc/PID/root), this does not. */
struct file_id {
	dev_t dev;
	ino_t ino; /* 0: the file could not be read */
};

/* The identity of the file at path (ino 0 when it cannot be read). */
struct file_id file_id_of(const char *path);

/* Room for a build id in hex, with its NUL (GNU build ids are 20 bytes; 64 allowed). */
#define OBJECT_BUILD_ID_MAX 129
/* The GNU build id of the ELF file at path, in lower-case hex, into buf (caller-owned); returns
 * buf, "" when the file has none or cannot be read. */
const char *object_build_id(const char *path, char *buf, size_t len);

struct object {
	char *path; /* absolute path as the process sees it */
	char *file; /* the same file as the recorder opens it (see objects.root) */
	struct file_id id;
	uint64_t bias;	      /* load bias: runtime address = link-time address + bias */
	bool elf;	      /* an ELF file (maps also list data files: those are kept, unused) */
	bool has_probes;      /* carries closure probes (.note.stapsdt) */
	bool attached;	      /* its probes are attached */
	bool registry_sought; /* its batch registry was looked for (recorder/session_batch.c) */
};

struct objects {
	struct object *v; /* owned */
	size_t n;
	/*
	 * "/proc/PID/root" when the process lives in another mount namespace (a container), where
	 * its paths name other files than ours; "" otherwise. Set by objects_set_process.
	 */
	char root[32];
};

/* Says which process the objects belong to (for the paths of another mount namespace). */
void objects_set_process(struct objects *o, pid_t pid);

/*
 * Adds path with its bias, unless that file (by this name or another) is known at that bias;
 * returns its index, and sets *added when it is new. Returns -1 on allocation failure.
 */
long objects_add(struct objects *o, const char *path, uint64_t bias, bool *added);

/* The index of path, or -1. */
long objects_find(const struct objects *o, const char *path);

/*
 * Reads /proc/PID/maps and adds every file-backed ELF object not yet known. Returns how many
 * were added, or -1 when the maps cannot be read (the process is gone).
 */
int objects_scan_maps(struct objects *o, pid_t pid);

/* The files a process mapped when its maps were last read (objects_mapped). */
struct maps_snapshot {
	pid_t pid;
	uint64_t read_ns;
	struct file_id *ids;
	char **paths;
	size_t n;
};

/*
 * Whether process pid maps the file id (or a file by the name path): 1 yes, 0 no, -1 its maps
 * cannot be read or are empty (gone, or a zombie). The maps are read again when m holds another
 * process's, or was read before seen_ns (the record's time: the mapping may be newer) and at least
 * min_gap_ns before now (a flood of records reads them at most so often), and before a "no" from
 * a snapshot read before seen_ns (the caller bounds how many refusals it examines). What a
 * closure:module record names is believed only when the process maps it (docs/probes.md, "Trust
 * boundary").
 */
int objects_mapped(struct maps_snapshot *m, pid_t pid, uint64_t seen_ns, uint64_t now,
		   uint64_t min_gap_ns, const char *path, struct file_id id);
void maps_snapshot_free(struct maps_snapshot *m);

void objects_free(struct objects *o);

#endif
