/*
 * The bytes of a trace, plain or zstd-compressed: which one is told by the first four bytes (the
 * zstd frame magic, or a skippable frame's), never by the file's name, so a compressed trace read
 * from a pipe or under any name works too. Memory stays bounded whatever the input: one read
 * buffer, and the decompressor's window, which is refused above 2^27 bytes (zstd's default limit).
 */
#ifndef CLOSURETRACE_TRACE_INPUT_H
#define CLOSURETRACE_TRACE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_error.h"

struct trace_input {
	const char *path; /* borrowed: what the messages name */
	FILE *f;
	bool compressed;
	struct ZSTD_DCtx_s *z; /* while compressed */
	unsigned char *in;     /* compressed bytes read, not yet decompressed */
	size_t in_len, in_pos, in_cap;
	uint64_t in_offset; /* bytes of the file read before in[] */
	size_t frame_left;  /* the decompressor's last hint: 0 between frames */
	bool eof;
};

/* Opens path ("-": standard input). 0, or -1 with err set ("FILE: error: ..."). */
int trace_input_open(struct trace_input *t, const char *path, struct trace_error *err);

/* Up to cap bytes of the trace's text into buf: the count, 0 at its end, or -1 with err set (a
 * read error; a compressed trace that is corrupt, or cut short inside a frame). */
long trace_input_read(struct trace_input *t, char *buf, size_t cap, struct trace_error *err);

void trace_input_close(struct trace_input *t);

#endif
