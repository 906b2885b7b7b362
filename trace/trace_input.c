/* The bytes of a trace, plain or zstd-compressed: see trace_input.h. */
#include "trace_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "mem_limit.h"

#define INPUT_BUFFER   (1 << 17) /* ZSTD_DStreamInSize(): one block */
#define WINDOW_LOG_MAX 27	 /* a frame that needs more than 128 MiB of window is refused */

/* A zstd frame (RFC 8878: 0xFD2FB528) or a skippable frame (0x184D2A50..5F), little-endian. */
static bool zstd_magic(const unsigned char *p, size_t n)
{
	if (n < 4)
		return false;
	if (p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return true;
	return (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18;
}

static int fail_errno(struct trace_input *t, struct trace_error *err)
{
	trace_error_at(err, t->path, 0, "%s", strerror(errno));
	return -1;
}

/* More of the file into in[] (what is left of it moved to the front). */
static int refill(struct trace_input *t, struct trace_error *err)
{
	size_t got;

	if (t->in_pos) {
		memmove(t->in, t->in + t->in_pos, t->in_len - t->in_pos);
		t->in_offset += t->in_pos;
		t->in_len -= t->in_pos;
		t->in_pos = 0;
	}
	got = fread(t->in + t->in_len, 1, t->in_cap - t->in_len, t->f);
	t->in_len += got;
	if (!got && ferror(t->f))
		return fail_errno(t, err);
	if (!got)
		t->eof = true;
	return 0;
}

int trace_input_open(struct trace_input *t, const char *path, struct trace_error *err)
{
	*t = (struct trace_input){.path = path, .in_cap = INPUT_BUFFER};
	t->f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	if (!t->f)
		return fail_errno(t, err);
	t->in = malloc(t->in_cap);
	if (!t->in) {
		trace_input_close(t);
		trace_error_at(err, path, 0, "out of memory%s", mem_limit_note());
		return -1;
	}
	/* The first bytes decide; a short read (a pipe) is read again until four are there. */
	while (t->in_len < 4 && !t->eof)
		if (refill(t, err)) {
			trace_input_close(t);
			return -1;
		}
	t->compressed = zstd_magic(t->in, t->in_len);
	if (!t->compressed)
		return 0;
	t->z = ZSTD_createDCtx();
	if (!t->z ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(t->z, ZSTD_d_windowLogMax, WINDOW_LOG_MAX))) {
		trace_input_close(t);
		trace_error_at(err, path, 0, "out of memory%s", mem_limit_note());
		return -1;
	}
	return 0;
}

static long read_compressed(struct trace_input *t, char *buf, size_t cap, struct trace_error *err)
{
	ZSTD_outBuffer out = {buf, cap, 0};

	/* Until some text came out: a frame's header, or a skippable frame, makes none. At the
	 * end of the file the decompressor is still called, to flush what it holds. */
	while (!out.pos) {
		ZSTD_inBuffer in;
		size_t r;

		if (t->in_pos == t->in_len && !t->eof) {
			if (refill(t, err))
				return -1;
			continue;
		}
		in = (ZSTD_inBuffer){t->in, t->in_len, t->in_pos};
		r = ZSTD_decompressStream(t->z, &out, &in);
		if (ZSTD_isError(r)) {
			trace_error_at(err, t->path, 0,
				       "corrupt zstd data near byte %llu of the file: %s",
				       (unsigned long long)(t->in_offset + t->in_pos),
				       ZSTD_getErrorName(r));
			return -1;
		}
		if (!out.pos && in.pos == t->in_pos && t->eof)
			break; /* nothing held: r would be the next frame's header, which never
				  comes */
		t->in_pos = in.pos;
		t->frame_left = r;
	}
	if (!out.pos && t->eof && t->frame_left) {
		trace_error_at(
			err, t->path, 0,
			"the compressed trace is cut short inside a zstd frame (after "
			"byte %llu of the file): the recording was killed while writing, or the "
			"file was truncated",
			(unsigned long long)(t->in_offset + t->in_len));
		return -1;
	}
	return (long)out.pos;
}

long trace_input_read(struct trace_input *t, char *buf, size_t cap, struct trace_error *err)
{
	size_t n;

	if (t->compressed)
		return read_compressed(t, buf, cap, err);
	/* What the magic test read comes first. */
	if (t->in_pos < t->in_len) {
		n = t->in_len - t->in_pos < cap ? t->in_len - t->in_pos : cap;
		memcpy(buf, t->in + t->in_pos, n);
		t->in_pos += n;
		return (long)n;
	}
	n = fread(buf, 1, cap, t->f);
	if (!n && ferror(t->f))
		return fail_errno(t, err);
	return (long)n;
}

void trace_input_close(struct trace_input *t)
{
	if (t->f && t->f != stdin)
		fclose(t->f);
	ZSTD_freeDCtx(t->z);
	free(t->in);
	t->f = NULL;
	t->z = NULL;
	t->in = NULL;
}
