/* A queue of raw records that spills to a file: see spool.h. */
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
#define PUNCH_MIN (16u << 20)

struct spool_chunk {
	struct spool_chunk *next;
	char *data;   /* NULL: read back from the file (the consumer's readbuf) */
	uint32_t len; /* bytes of records */
	uint64_t events;
};

/* A chunk in the file: this head, then len bytes. */
struct file_head {
	uint32_t len, pad;
	uint64_t events;
};

static void *write_chunks(void *arg);

int spool_init(struct spool *q, size_t mem_max)
{
	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->mem_max = mem_max ? mem_max : SPOOL_MEM_MAX;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	pthread_cond_init(&q->done, NULL);
	return 0;
}

static void chunk_free(struct spool_chunk *c)
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
	if (q->writer_started) {
		pthread_mutex_lock(&q->lock);
		q->stop = true;
		pthread_cond_signal(&q->wake);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->writer, NULL);
	}
	chunk_free(q->head);
	chunk_free(q->phead);
	chunk_free(q->fill);
	chunk_free(q->cur);
	for (size_t i = 0; i < q->n_free; i++)
		free(q->free[i]);
	free(q->free);
	free(q->readbuf);
	if (q->fd >= 0)
		close(q->fd);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->done);
	memset(q, 0, sizeof(*q));
	q->fd = -1;
}

/* A chunk buffer, kept or new, counted in q->mem (the lock held). */
static char *buffer_take(struct spool *q)
{
	char *data = q->n_free ? q->free[--q->n_free] : malloc(SPOOL_CHUNK);

	if (data)
		q->mem += SPOOL_CHUNK;
	return data;
}

/* Gives a chunk buffer back: kept for reuse, or freed (the lock held). */
static void buffer_give(struct spool *q, char *data)
{
	q->mem -= SPOOL_CHUNK;
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
	/* Twice the memory allowed: the disk does not keep up either. */
	c->data = q->mem < 2 * q->mem_max ? buffer_take(q) : NULL;
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

static void append(struct spool_chunk **head, struct spool_chunk **tail, struct spool_chunk *c)
{
	c->next = NULL;
	if (*tail)
		(*tail)->next = c;
	else
		*head = c;
	*tail = c;
}

static struct spool_chunk *pop(struct spool_chunk **head, struct spool_chunk **tail)
{
	struct spool_chunk *c = *head;

	if (c && !(*head = c->next))
		*tail = NULL;
	return c;
}

bool spool_commit(struct spool *q)
{
	struct spool_chunk *c = q->fill;

	if (!c || !c->len)
		return false;
	q->fill = NULL;
	pthread_mutex_lock(&q->lock);
	/* Past the memory allowed, and from then on until the file is read: after the file. */
	if (!q->spill && q->mem > q->mem_max && !q->err && !q->writer_started) {
		int err = pthread_create(&q->writer, NULL, write_chunks, q);

		q->writer_started = !err;
		q->err = err;
	}
	if (q->spill || (q->mem > q->mem_max && !q->err)) {
		q->spill = true;
		append(&q->phead, &q->ptail, c);
		pthread_cond_signal(&q->wake);
	} else {
		append(&q->head, &q->tail, c);
	}
	q->queued += c->len;
	if (q->queued > q->queued_max)
		q->queued_max = q->queued;
	pthread_mutex_unlock(&q->lock);
	return true;
}

/* Writes all of buf at off. 0 or errno. */
static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		done += (size_t)n;
	}
	return 0;
}

/* One chunk to the file's end (the lock not held). 0 or errno. */
static int to_file(struct spool *q, struct spool_chunk *c, uint64_t at)
{
	struct file_head h = {.len = c->len, .events = c->events};
	const char *dir = getenv("TMPDIR");
	int err;

	if (q->fd < 0)
		q->fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (q->fd < 0)
		return errno;
	err = write_all(q->fd, &h, sizeof(h), at);
	return err ? err : write_all(q->fd, c->data, c->len, at + sizeof(h));
}

/* The file's writer: pending chunks, oldest first, until stopped or the file fails. */
static void *write_chunks(void *arg)
{
	struct spool *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct spool_chunk *c;
		uint64_t at;
		int err;

		while (!q->stop && (!q->phead || q->err))
			pthread_cond_wait(&q->wake, &q->lock);
		if (q->stop)
			break;
		at = q->file_end;
		c = q->writing = pop(&q->phead, &q->ptail);
		pthread_mutex_unlock(&q->lock);
		err = to_file(q, c, at); /* the file's end moves only here */
		pthread_mutex_lock(&q->lock);
		q->writing = NULL;
		if (err) {
			q->err = err; /* the chunk stays in memory, first in line */
			c->next = q->phead;
			q->phead = c;
			if (!q->ptail)
				q->ptail = c;
		} else {
			q->file_end = at + sizeof(struct file_head) + c->len;
			q->file_events += c->events;
			q->spooled += c->len;
			buffer_give(q, c->data);
			free(c);
		}
		pthread_cond_broadcast(&q->done);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* The consumer is done with its chunk. */
static void release(struct spool *q)
{
	struct spool_chunk *c = q->cur;

	q->cur = NULL;
	pthread_mutex_lock(&q->lock);
	q->queued -= c->len;
	if (c->data)
		buffer_give(q, c->data);
	pthread_mutex_unlock(&q->lock);
	free(c);
}

/* The next chunk of the file into q->cur (the lock held, dropped while reading). */
static bool read_back(struct spool *q, uint64_t *lost)
{
	struct file_head h;
	uint64_t at = q->file_read;
	struct spool_chunk *c = calloc(1, sizeof(*c));
	bool ok;

	pthread_mutex_unlock(&q->lock);
	if (!q->readbuf)
		q->readbuf = malloc(SPOOL_CHUNK);
	ok = c && q->readbuf && pread(q->fd, &h, sizeof(h), (off_t)at) == sizeof(h) &&
	     h.len <= SPOOL_CHUNK &&
	     pread(q->fd, q->readbuf, h.len, (off_t)(at + sizeof(h))) == (ssize_t)h.len;
	pthread_mutex_lock(&q->lock);
	if (!ok) {
		/* Our own file: only a failing disk gets here. The rest of it is given up. */
		free(c);
		q->file_read = q->file_end;
		*lost += q->file_events;
		q->file_events = 0;
		q->err = q->err ? q->err : EIO;
		return false;
	}
	q->file_read = at + sizeof(h) + h.len;
	q->file_events -= h.events <= q->file_events ? h.events : q->file_events;
	c->len = h.len;
	c->events = h.events;
	q->cur = c;
	return true;
}

/*
 * Gives the blocks of what was read back to the file system, PUNCH_MIN bytes at a time: the
 * file only grows (its writer appends without the lock), and each punch waits for the disk, so
 * it is done outside the lock, by the consumer, seldom.
 */
static void punch(struct spool *q)
{
	uint64_t upto = q->file_read; /* only the consumer moves it */

	if (upto - q->punched < PUNCH_MIN)
		return;
	fallocate(q->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)q->punched,
		  (off_t)(upto - q->punched));
	q->punched = upto;
}

/* The next committed chunk into q->cur, in order. False when there is none. */
static bool next_chunk(struct spool *q, uint64_t *lost)
{
	bool got = false;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		if ((q->cur = pop(&q->head, &q->tail))) {
			got = true;
			break;
		}
		if (!q->spill)
			break;
		if (q->file_read < q->file_end) {
			got = read_back(q, lost);
			if (got)
				break;
			continue;
		}
		if (q->writing) {
			pthread_cond_wait(&q->done, &q->lock);
			continue;
		}
		if (q->phead) { /* caught up with the file: the pending ones, from memory */
			q->cur = pop(&q->phead, &q->ptail);
			got = true;
			break;
		}
		q->spill = false; /* nothing left anywhere: memory first again */
	}
	pthread_mutex_unlock(&q->lock);
	q->pos = 0;
	punch(q);
	return got;
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
