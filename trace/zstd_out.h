/*
 * A stream that writes zstd-compressed data to a file descriptor, as a FILE so that the trace
 * writer does not know about it. Every chunk the stream's buffer hands down ends a zstd frame: a
 * recording killed mid-way leaves complete frames, readable up to the last one written.
 */
#ifndef CLOSURETRACE_ZSTD_OUT_H
#define CLOSURETRACE_ZSTD_OUT_H

#include <stdio.h>

/* The zstd level: 1 keeps up with the recorder (docs/trace-format.md gives the figures). */
#define ZSTD_OUT_LEVEL 1

/* A write-only stream over fd (which it owns and closes), or NULL with errno set. */
FILE *zstd_out_open(int fd);

#endif
