/*
 * An event's "frames" (docs/trace-format.md): the user stack --stacks took at an init or a get,
 * an array of address strings, innermost first. The reader's check of it: bounded, every item an
 * address, so that a damaged one is an error with its line, never a crash.
 */
#ifndef CLOSURETRACE_TRACE_FRAMES_H
#define CLOSURETRACE_TRACE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "trace_line.h"
#include "trace_reader.h"

/* f's addresses into ips (TRACE_FRAMES_MAX of room), *n of them: 0, or -1 with why. */
int trace_frames_parse(const struct field *f, uint64_t *ips, unsigned *n, char *why, size_t whylen);

#endif
