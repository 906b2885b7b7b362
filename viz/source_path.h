/*
 * How every presentation shows a source file (report and its --json, check and its SARIF, graph,
 * explain, timeline, and so the fleet's rows): relative to its source root, so that the same
 * line reads the same from any checkout and a fleet counts one leak once wherever it was built.
 *
 * A file's source root is the deepest folder, other than "/", that holds both the file and the
 * folder it was compiled in (DWARF's DW_AT_comp_dir: a sym record's "dir"). That is the checkout
 * for a build in place (make in bcachefs-tools: libbcachefs/super.c, as gcc's own messages say
 * it), and the folder above the source and the build tree for a build out of tree (cmake -B
 * build: tests/suites/check/ck_prog.c). A file shares no such folder with its build (a system
 * header) or is relative: it is shown as the trace gives it. A trace older than "dir" gives each
 * absolute file the folder all of them share (viz/model_text.c), as graph said once in its title.
 */
#ifndef CLOSURETRACE_SOURCE_PATH_H
#define CLOSURETRACE_SOURCE_PATH_H

#include <stddef.h>
#include <stdlib.h>

/*
 * The deepest folder other than "/" that holds both a and b (b may itself be a folder, with or
 * without its '/'), as a length of a: its bytes and the '/' after them; 0 when there is none or
 * either is not absolute. The source root of file is source_common_dir(file, dir).
 */
size_t source_common_dir(const char *a, const char *b);

/*
 * file made absolute: a relative one is relative to dir, the folder it was compiled in (DWARF
 * names a file either way: src/io.c beside /home/me/proj/src/io.c); "." and ".." folders left
 * out, as written (no symbolic link is read). A copy of file when it is relative and dir is NULL
 * or relative. Free it; NULL when file is or out of memory.
 */
char *source_path_join(const char *dir, const char *file);

/* The part of path shown: what follows its source root, the first root bytes (0: all of it). */
const char *source_path_shown(const char *path, size_t root);

/*
 * The same root in bytes, the path's own, when shown is the path shown with escapes
 * (trace_text.h): as many folders, since no escape holds a '/'.
 */
size_t source_root_in(const char *bytes, const char *shown, size_t root);

/*
 * The source root of a file shown with escapes (trace_text.h), made whole, given the folder it was
 * compiled in (dir, NULL when unknown): as a length of shown, 0 when none.
 */
size_t source_root_shown(const char *shown, const char *dir);

/*
 * One site's file as every presentation shows it, made visible (trace_text.h) and relative to its
 * source root, given the folder it was compiled in (dir, NULL when unknown): for a command that
 * names sites one at a time from live symbols (ps). Free it; NULL when file is or out of memory.
 */
char *source_path_show(const char *dir, const char *file);

#endif
