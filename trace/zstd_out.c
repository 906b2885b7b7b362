/* A zstd-compressing FILE: see zstd_out.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "zstd_out.h"

struct zstd_out {
	int fd;
	ZSTD_CCtx *z;
	void *buf;
	size_t cap;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One frame of what the stream's buffer holds. */
static ssize_t zstd_out_write(void *cookie, const char *data, size_t size)
{
	struct zstd_out *o = cookie;
	ZSTD_inBuffer in = {data, size, 0};
	size_t left;

	do {
		ZSTD_outBuffer out = {o->buf, o->cap, 0};

		left = ZSTD_compressStream2(o->z, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(left)) {
			errno = EIO;
			return -1;
		}
		if (write_all(o->fd, o->buf, out.pos))
			return -1;
	} while (left);
	return (ssize_t)size;
}

static int zstd_out_close(void *cookie)
{
	struct zstd_out *o = cookie;
	int r = close(o->fd);

	ZSTD_freeCCtx(o->z);
	free(o->buf);
	free(o);
	return r;
}

FILE *zstd_out_open(int fd)
{
	struct zstd_out *o = calloc(1, sizeof(*o));
	FILE *f = NULL;

	if (o) {
		o->fd = fd;
		o->cap = ZSTD_CStreamOutSize();
		o->buf = malloc(o->cap);
		o->z = ZSTD_createCCtx();
	}
	/* A checksum per frame: a damaged file is refused, not read as other text. */
	if (o && o->buf && o->z &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(o->z, ZSTD_c_compressionLevel, ZSTD_OUT_LEVEL)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(o->z, ZSTD_c_checksumFlag, 1)))
		f = fopencookie(
			o, "w",
			(cookie_io_functions_t){.write = zstd_out_write, .close = zstd_out_close});
	if (!f) {
		if (o) {
			ZSTD_freeCCtx(o->z);
			free(o->buf);
		}
		free(o);
		errno = ENOMEM;
	}
	return f;
}
