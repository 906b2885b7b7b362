/* The dynamic loader's cache and configuration: see ld_search.h. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "ld_search.h"

/* glibc's cache format "1.1" (elf/cache.h): a header, the entries, then their strings. */
#define CACHE_MAGIC	  "glibc-ld.so.cache1.1"
#define OLD_CACHE_MAGIC	  "ld.so-1.7.0"
#define CACHE_HEADER_SIZE 48
#define CACHE_ENTRY_SIZE  24
#define OLD_HEADER_SIZE	  16
#define OLD_ENTRY_SIZE	  12
#define MAX_CONF_DEPTH	  8

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The NUL-terminated string at off of the size bytes at base, or NULL when it does not end there. */
static const char *string_at(const unsigned char *base, size_t size, uint32_t off)
{
	if (off >= size || !memchr(base + off, '\0', size - off))
		return NULL;
	return (const char *)base + off;
}

/* soname's path in a cache of size bytes at file, or NULL. */
static char *cache_lookup(const unsigned char *file, size_t size, const char *soname)
{
	const unsigned char *head = file;
	size_t avail = size;
	uint32_t n;

	/* A cache in both formats (older glibc): the new one follows the old one's entries. */
	if (size >= OLD_HEADER_SIZE && !memcmp(file, OLD_CACHE_MAGIC, strlen(OLD_CACHE_MAGIC))) {
		size_t skip = OLD_HEADER_SIZE + (size_t)u32_at(file + 12) * OLD_ENTRY_SIZE;

		skip = (skip + 7) & ~(size_t)7;
		if (skip >= size)
			return NULL;
		head = file + skip;
		avail = size - skip;
	}
	if (avail < CACHE_HEADER_SIZE || memcmp(head, CACHE_MAGIC, strlen(CACHE_MAGIC)))
		return NULL;
	n = u32_at(head + 20);
	if (n > (avail - CACHE_HEADER_SIZE) / CACHE_ENTRY_SIZE)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *e = head + CACHE_HEADER_SIZE + (size_t)i * CACHE_ENTRY_SIZE;
		const char *key, *value;

		if ((u32_at(e) & 0xffff) != CLOSURETRACE_LD_CACHE_FLAGS)
			continue; /* another architecture's or libc's entry */
		key = string_at(head, avail, u32_at(e + 4));
		value = string_at(head, avail, u32_at(e + 8));
		if (key && value && !strcmp(key, soname) && access(value, R_OK) == 0)
			return realpath(value, NULL);
	}
	return NULL;
}

char *ld_cache_find(const char *cache_path, const char *soname)
{
	int fd = open(cache_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *map;
	char *found = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			found = cache_lookup(map, (size_t)st.st_size, soname);
			munmap(map, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}

/* Appends dir to the colon-separated list *out (of *len bytes). */
static void append_dir(char **out, size_t *len, const char *dir, size_t dir_len)
{
	char *grown = realloc(*out, *len + dir_len + 2);

	if (!grown)
		return;
	*out = grown;
	if (*len)
		grown[(*len)++] = ':';
	memcpy(grown + *len, dir, dir_len);
	*len += dir_len;
	grown[*len] = '\0';
}

static void read_conf(const char *path, int depth, char **out, size_t *len);

/* "include PATTERN": every file the glob matches, relative to the including file's folder. */
static void read_include(const char *from, const char *pattern, int depth, char **out, size_t *len)
{
	char *copy = strdup(from), full[4096];
	glob_t g;

	if (!copy)
		return;
	if (pattern[0] == '/')
		snprintf(full, sizeof(full), "%s", pattern);
	else
		snprintf(full, sizeof(full), "%s/%s", dirname(copy), pattern);
	free(copy);
	if (glob(full, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			read_conf(g.gl_pathv[i], depth + 1, out, len);
	globfree(&g);
}

/* One configuration file: folders (separated by blanks, commas or colons), includes, comments. */
static void read_conf(const char *path, int depth, char **out, size_t *len)
{
	static const char blanks[] = " \t\r\n,:";
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (depth > MAX_CONF_DEPTH || !(f = fopen(path, "re")))
		return; /* too deep: an include cycle */
	while (getline(&line, &cap, f) > 0) {
		char *word = line, *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		word += strspn(word, " \t");
		if (!strncmp(word, "include", 7) && strchr(" \t", word[7])) {
			word += 7 + strspn(word + 7, " \t");
			word[strcspn(word, " \t\r\n")] = '\0';
			if (*word)
				read_include(path, word, depth, out, len);
			continue;
		}
		if (!strncmp(word, "hwcap", 5) && strchr(" \t", word[5]))
			continue; /* hwcap NAME: not a folder */
		while (*(word += strspn(word, blanks))) {
			size_t n = strcspn(word, blanks);

			if (word[0] == '/')
				append_dir(out, len, word, n);
			word += n;
		}
	}
	free(line);
	fclose(f);
}

char *ld_conf_dirs(const char *conf_path)
{
	char *out = NULL;
	size_t len = 0;

	read_conf(conf_path, 0, &out, &len);
	return out;
}
