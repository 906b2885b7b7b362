/*
 * Addresses of the traced process to function, file and line, through elfutils libdwfl, over
 * the objects the recorder learnt (path and load bias), so that it works whether or not the
 * process is still alive. Inline-aware: a call inlined from closure.h resolves to the user's line.
 */
#ifndef CLOSURETRACE_SYMBOLS_H
#define CLOSURETRACE_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_writer.h" /* struct sym_info: what a sym record of the trace says */

struct symbols;

/* A new, empty symbolizer (NULL on failure). Free with symbols_free. */
struct symbols *symbols_new(void);
void symbols_free(struct symbols *s);

/*
 * Tells the symbolizer about an object mapped with the given load bias: named path (what sym
 * records call it), read from file. 0, or -1.
 */
int symbols_add_object(struct symbols *s, const char *path, const char *file, uint64_t bias);

/*
 * Resolves addr (an address inside an instruction: return addresses already minus 1). Returns
 * false when addr lies in no known object; the strings in *out live until the next call.
 */
bool symbols_resolve(struct symbols *s, uint64_t addr, struct sym_info *out);

#endif
