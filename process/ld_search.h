/*
 * Where the dynamic loader finds a library by name besides RPATH, LD_LIBRARY_PATH and RUNPATH:
 * its cache (/etc/ld.so.cache, written by ldconfig from /etc/ld.so.conf) and the folders that
 * /etc/ld.so.conf lists. Both files are read as untrusted input: bounded, never past their end.
 */
#ifndef CLOSURETRACE_LD_SEARCH_H
#define CLOSURETRACE_LD_SEARCH_H

/* The path the cache file gives for soname (an x86-64 libc6 entry), or NULL. Caller frees. */
char *ld_cache_find(const char *cache_path, const char *soname);

/*
 * The folders conf_path lists, in order, its include lines (globs, relative to the file's folder)
 * expanded in place, as one colon-separated list; NULL when there are none. Caller frees.
 */
char *ld_conf_dirs(const char *conf_path);

#endif
