/*
 * Reading the sink's directory: see sink_read.h. Files are named PID.T (an image's stream) and
 * PID.T.K (its thread buffer K). The buffers are read after their image's stream: a record there
 * is whole when its seq is the buffer's base plus its slot (the library writes seq last), and the
 * batch decoder keeps once a record that also reached the stream (a kill between the write and
 * the buffer's reset).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_decode.h"
#include "closure_batch.h"
#include "session.h"
#include "sink_read.h"
#include "trace_text.h"

/* A chunk larger than a full batch is not libclosure's: the file is damaged. */
#define CHUNK_MAX (sizeof(struct closure_sink_batch) + CLOSURE_BATCH_RECORDS * 56 + 8)
#define HEADER	  sizeof(struct closure_sink_file)

/* The image being read. */
struct image {
	unsigned no;	  /* its number in the batch decoder's keys */
	unsigned files;	  /* buffer files found */
	uint32_t buffers; /* buffer files its stream says it made */
	bool ended;	  /* it ran its exit handlers */
};

struct entry {
	uint32_t pid, k; /* k: 0 for the stream, else the buffer's number */
	uint64_t image;
	char name[64];
};

/* The image's key for the batch decoder; buf is the buffer's K. */
static uint64_t buffer_key(unsigned image, uint32_t buf, uint32_t tid)
{
	return (uint64_t)image << 32 | (buf ? buf : 1u << 31 | tid);
}

/* PID.T or PID.T.K: false for any other name. */
static bool parse_name(const char *name, struct entry *e)
{
	unsigned long long pid, image, k = 0;
	int end = 0;

	if (strlen(name) >= sizeof(e->name) ||
	    (sscanf(name, "%llu.%llu%n.%llu%n", &pid, &image, &end, &k, &end) < 2) || name[end] ||
	    !pid || pid > UINT32_MAX || k > UINT32_MAX)
		return false;
	*e = (struct entry){.pid = (uint32_t)pid, .image = image, .k = (uint32_t)k};
	strcpy(e->name, name);
	return true;
}

static int by_image(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

static bool header_ok(const struct closure_sink_file *h, const struct entry *e)
{
	return h->magic == CLOSURE_BATCH_MAGIC && h->version == CLOSURE_SINK_VERSION &&
	       h->kind == (e->k ? CLOSURE_SINK_BUFFER : CLOSURE_SINK_STREAM) && h->pid == e->pid &&
	       h->image == e->image && h->index == e->k;
}

/* One chunk of a stream into the session. */
static void take_chunk(struct session *s, const struct closure_sink_chunk *h, const uint8_t *p,
		       unsigned image)
{
	if (h->kind == CLOSURE_SINK_MODULE && h->size > 8) {
		char path[4096];
		uint64_t bias;
		size_t len = h->size - 8 < sizeof(path) - 1 ? h->size - 8 : sizeof(path) - 1;

		memcpy(&bias, p, 8);
		memcpy(path, p + 8, len);
		path[len] = '\0';
		session_on_module(s, &(struct session_module){.path = path, .base = bias});
	} else if (h->kind == CLOSURE_SINK_BATCH && h->size >= sizeof(struct closure_sink_batch)) {
		const struct closure_sink_batch *b = (const void *)p;

		if (h->size != sizeof(*b) + (size_t)b->n * sizeof(struct closure_batch_record))
			return;
		s->batches.dropped += b->dropped;
		batch_decoder_feed(s->batches.decoder, h->pid, b->tid,
				   buffer_key(image, b->buf, b->tid),
				   (const struct closure_batch_record *)(b + 1), b->n);
	}
}

/* An image's stream. */
static void take_stream(struct session *s, FILE *f, const char *path, const struct entry *e,
			struct image *im, struct sink_totals *t)
{
	uint8_t *buf = malloc(CHUNK_MAX);
	struct closure_sink_file fh;
	struct closure_sink_chunk h;
	bool ended = false, cut = false;

	if (!buf || fread(&fh, sizeof(fh), 1, f) != 1 || !header_ok(&fh, e)) {
		fprintf(stderr, "closuretrace: warning: %s: not a stream of the sink\n", path);
		t->damaged++;
		free(buf);
		return;
	}
	t->lost += fh.lost;
	im->buffers = fh.buffers;
	ended = fh.exited;
	for (;;) {
		size_t got = fread(&h, 1, sizeof(h), f);

		if (!got)
			break;
		cut = got != sizeof(h) || h.magic != CLOSURE_BATCH_MAGIC ||
		      h.version != CLOSURE_SINK_VERSION || h.pid != e->pid || h.size > CHUNK_MAX ||
		      fread(buf, 1, h.size, f) != h.size;
		if (cut)
			break;
		ended |= h.kind == CLOSURE_SINK_END;
		take_chunk(s, &h, buf, im->no);
	}
	/*
	 * A write that failed (a full disk, counted in fh.lost) may leave part of a chunk, and so
	 * may a kill in the middle of a write: its records are still in their buffer file then.
	 */
	if ((cut && !fh.failed && ended) || ferror(f)) {
		fprintf(stderr, "closuretrace: warning: %s: damaged; read up to byte %ld\n", path,
			ftell(f));
		t->damaged++;
	}
	free(buf);
	im->ended = ended;
}

/*
 * What a thread buffer still held. Its slots [0, n) were reserved since its last handover; one
 * whose seq is not base + slot was being written when the process died (at most one per append
 * in progress, depth), unless the process died inside the handover after base moved on.
 */
static void take_buffer(struct session *s, FILE *f, const struct entry *e, unsigned image,
			struct sink_totals *t)
{
	static struct {
		struct closure_sink_file h;
		struct closure_batch_buf b;
	} file;
	struct closure_batch_record keep[CLOSURE_BATCH_RECORDS];
	struct closure_batch_buf *b = &file.b;
	uint32_t n, valid = 0, torn = 0;
	size_t added;

	_Static_assert(sizeof(file) == HEADER + sizeof(struct closure_batch_buf), "buffer file");
	if (fread(&file, sizeof(file), 1, f) != 1 || !header_ok(&file.h, e) || b->sink != e->k) {
		fprintf(stderr, "closuretrace: warning: %s: not a buffer file of the sink\n",
			e->name);
		t->damaged++;
		return;
	}
	n = b->n < CLOSURE_BATCH_RECORDS ? b->n : CLOSURE_BATCH_RECORDS;
	for (uint32_t i = 0; i < n; i++) {
		if (b->rec[i].seq == (uint32_t)(b->base + i))
			keep[valid++] = b->rec[i];
		else
			torn++;
	}
	added = batch_decoder_feed(s->batches.decoder, e->pid, b->tid, buffer_key(image, e->k, 0),
				   keep, valid);
	t->recovered += added;
	if (valid && !added)
		return; /* the batch reached the stream, its dropped count with it */
	s->batches.dropped += b->dropped;
	if (torn <= b->depth)
		t->cut += torn;
	/* Past the buffer's end: appends that found it full and had not counted themselves. */
	if (b->n > CLOSURE_BATCH_RECORDS + b->dropped) {
		uint32_t over = b->n - CLOSURE_BATCH_RECORDS - b->dropped;

		t->cut += over < b->depth ? over : b->depth;
	}
}

/* One file of an image into the session. */
static void take_file(struct session *s, const char *dir, const struct entry *e, struct image *im,
		      struct sink_totals *t)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, e->name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "closuretrace: warning: %s: %s\n", path, strerror(errno));
		t->damaged++;
	} else if (e->k) {
		im->files++;
		take_buffer(s, f, e, im->no, t);
	} else {
		take_stream(s, f, path, e, im, t);
	}
	if (f)
		fclose(f);
	unlink(path);
}

/* The sink's files of dir, sorted by process, image and buffer; *n of them. */
static struct entry *list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct entry *v = NULL, e;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	if (!d)
		fprintf(stderr, "closuretrace: warning: the sink folder %s: %s: no events\n", dir,
			strerror(errno));
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!parse_name(de->d_name, &e)) {
			char name[sizeof(de->d_name) * TEXT_ESCAPE_MAX];

			/* A name the traced program chose: shown as every name is. */
			fprintf(stderr, "closuretrace: warning: %s/%s: not the sink's; removed\n",
				dir, text_visible(name, sizeof(name), de->d_name));
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (*n == cap) {
			struct entry *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!w)
				break;
			v = w;
		}
		v[(*n)++] = e;
	}
	if (d)
		closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_image);
	return v;
}

void sink_read_dir(struct session *s, const char *dir, struct sink_totals *t)
{
	size_t n, i = 0;
	struct entry *v = list_dir(dir, &n);
	unsigned image = 0;

	while (i < n) {
		uint32_t pid = v[i].pid;
		struct image im = {0};

		t->processes++;
		while (i < n && v[i].pid == pid) { /* its images, oldest first */
			uint64_t ts = v[i].image;

			im = (struct image){.no = ++image};
			for (; i < n && v[i].pid == pid && v[i].image == ts; i++)
				take_file(s, dir, &v[i], &im, t);
			if (im.files < im.buffers) {
				fprintf(stderr,
					"closuretrace: warning: %s/%" PRIu32 ".%" PRIu64
					": %u of its %" PRIu32 " buffer files missing\n",
					dir, pid, ts, im.buffers - im.files, im.buffers);
				t->damaged++;
			}
		}
		t->abrupt += !im.ended; /* its last image */
	}
	free(v);
}
