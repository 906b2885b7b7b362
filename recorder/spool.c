/* A queue of raw records that overflows to a file: see spool.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

#define HEAD	  8u /* a record's size (4 bytes) and padding, before its bytes */
#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)
#define FREE_KEPT 16 /* chunk buffers kept for reuse */

struct spool_chunk {
	struct spool_chunk *next;
	char *data; /* NULL: in the file at off */
	uint64_t off;
	uint32_t len; /* bytes of records */
	uint64_t events;
};

int spool_init(struct spool *q, size_t mem_max)
{
	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->mem_max = mem_max ? mem_max : SPOOL_MEM_MAX;
	return -pthread_mutex_init(&q->lock, NULL);
}

static void chunk_list_free(struct spool_chunk *c)
{
	while (c) {
		struct spool_chunk *next = c->next;

		free(c->data);
		free(c);
		c = next;
	}
}

void spool_free(struct spool *q)
{
	chunk_list_free(q->head);
	chunk_list_free(q->fill);
	chunk_list_free(q->cur);
	for (size_t i = 0; i < q->n_free; i++)
		free(q->free[i]);
	free(q->free);
	free(q->readbuf);
	if (q->fd >= 0)
		close(q->fd);
	pthread_mutex_destroy(&q->lock);
	memset(q, 0, sizeof(*q));
	q->fd = -1;
}

/* A chunk buffer: a kept one (the lock held by the caller), or a new one. */
static char *buffer_take(struct spool *q)
{
	if (q->n_free)
		return q->free[--q->n_free];
	return malloc(SPOOL_CHUNK);
}

/* Keeps a chunk buffer for reuse, or frees it (the lock held). */
static void buffer_give(struct spool *q, char *data)
{
	if (!q->free)
		q->free = calloc(FREE_KEPT, sizeof(char *));
	if (q->free && q->n_free < FREE_KEPT)
		q->free[q->n_free++] = data;
	else
		free(data);
}

static struct spool_chunk *chunk_new(struct spool *q)
{
	struct spool_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_lock(&q->lock);
	c->data = buffer_take(q);
	pthread_mutex_unlock(&q->lock);
	if (!c->data) {
		free(c);
		return NULL;
	}
	return c;
}

bool spool_put(struct spool *q, const void *data, size_t size, uint32_t events)
{
	size_t need = HEAD + ALIGN8(size);
	uint32_t n = (uint32_t)size;

	if (size > SPOOL_RECORD_MAX)
		return false;
	if (q->fill && q->fill->len + need > SPOOL_CHUNK)
		spool_commit(q);
	if (!q->fill && !(q->fill = chunk_new(q)))
		return false;
	memcpy(q->fill->data + q->fill->len, &n, sizeof(n));
	memcpy(q->fill->data + q->fill->len + HEAD, data, size);
	q->fill->len += (uint32_t)need;
	q->fill->events += events;
	return true;
}

/* The whole of c at the file's end (the lock held): its memory is given back. 0 or errno. */
static int to_file(struct spool *q, struct spool_chunk *c)
{
	const char *dir = getenv("TMPDIR");
	size_t done = 0;

	if (q->fd < 0)
		q->fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (q->fd < 0)
		return errno;
	while (done < c->len) {
		ssize_t n =
			pwrite(q->fd, c->data + done, c->len - done, (off_t)(q->file_end + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		done += (size_t)n;
	}
	c->off = q->file_end;
	q->file_end += c->len;
	q->spooled += c->len;
	buffer_give(q, c->data);
	c->data = NULL;
	return 0;
}

bool spool_commit(struct spool *q)
{
	struct spool_chunk *c = q->fill;

	if (!c || !c->len)
		return false;
	q->fill = NULL;
	pthread_mutex_lock(&q->lock);
	/* Past the memory allowed: to the file. Should that fail, it stays (the loop stops). */
	if (q->mem + SPOOL_CHUNK > q->mem_max && !q->err)
		q->err = to_file(q, c);
	if (c->data)
		q->mem += SPOOL_CHUNK;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->queued += c->len;
	if (q->queued > q->queued_max)
		q->queued_max = q->queued;
	pthread_mutex_unlock(&q->lock);
	return true;
}

/* The consumer is done with its chunk. */
static void release(struct spool *q)
{
	struct spool_chunk *c = q->cur;

	q->cur = NULL;
	pthread_mutex_lock(&q->lock);
	q->queued -= c->len;
	if (c->data) {
		q->mem -= SPOOL_CHUNK;
		buffer_give(q, c->data);
	}
	pthread_mutex_unlock(&q->lock);
	free(c);
}

/* The next committed chunk into q->cur, read back from the file if it is there. */
static bool next_chunk(struct spool *q, uint64_t *lost)
{
	for (;;) {
		struct spool_chunk *c;
		size_t done = 0;

		pthread_mutex_lock(&q->lock);
		c = q->head;
		if (c && !(q->head = c->next))
			q->tail = NULL;
		pthread_mutex_unlock(&q->lock);
		if (!c)
			return false;
		q->cur = c;
		q->pos = 0;
		if (c->data)
			return true;
		if (!q->readbuf && !(q->readbuf = malloc(SPOOL_CHUNK)))
			done = (size_t)-1;
		while (done < c->len) {
			ssize_t n = pread(q->fd, q->readbuf + done, c->len - done,
					  (off_t)(c->off + done));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		if (done == c->len) {
			/* Read: its blocks go back to the file system. */
			fallocate(q->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)c->off,
				  (off_t)c->len);
			return true;
		}
		*lost += c->events;
		release(q);
	}
}

const void *spool_get(struct spool *q, size_t *size, uint64_t *lost)
{
	for (;;) {
		if (q->cur && q->pos + HEAD <= q->cur->len) {
			const char *base = q->cur->data ? q->cur->data : q->readbuf;
			uint32_t n;

			memcpy(&n, base + q->pos, sizeof(n));
			if (q->pos + HEAD + ALIGN8(n) <= q->cur->len) {
				const void *rec = base + q->pos + HEAD;

				q->pos += HEAD + ALIGN8(n);
				*size = n;
				return rec;
			}
			q->pos = q->cur->len; /* cannot be: our own bytes; the rest is skipped */
		}
		if (q->cur)
			release(q);
		if (!next_chunk(q, lost))
			return NULL;
	}
}

uint64_t spool_backlog(struct spool *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->queued;
	pthread_mutex_unlock(&q->lock);
	return n;
}
