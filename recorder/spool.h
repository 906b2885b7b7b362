/*
 * A queue of raw ring-buffer records between two threads: the drain thread puts what it copies
 * out of the ring buffer, the recorder's loop takes it to decode and write. The queue holds up to
 * SPOOL_MEM_MAX bytes in memory; past it, whole chunks are written to an unnamed file in $TMPDIR
 * (O_TMPFILE: a killed recorder leaves nothing behind) and read back in their turn, so that a
 * writer that falls behind costs disk, not loss and not memory without bound.
 *
 * One producer, one consumer. Records keep their order.
 */
#ifndef CLOSURETRACE_SPOOL_H
#define CLOSURETRACE_SPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A chunk of records; a record never spans two. */
#define SPOOL_CHUNK (64 * 1024u)
/* The largest record the queue takes (a ring-buffer record is far shorter). */
#define SPOOL_RECORD_MAX (SPOOL_CHUNK - 8)
/* What the queue holds in memory before it writes chunks to its file. */
#define SPOOL_MEM_MAX (64u << 20)

struct spool_chunk;

struct spool {
	pthread_mutex_t lock;
	struct spool_chunk *head, *tail; /* committed, oldest first */
	char **free;			 /* chunk buffers kept for reuse */
	size_t n_free;
	size_t mem; /* bytes of committed chunks held in memory */
	size_t mem_max;
	uint64_t queued;     /* bytes committed and not taken */
	uint64_t queued_max; /* the most queued at once */
	uint64_t spooled;    /* bytes written to the file, in all */
	int fd;		     /* the file (-1 until the first chunk goes there) */
	uint64_t file_end;
	int err; /* the first failed write (errno): the chunk stays in memory */
	/* The producer's chunk being filled (not in the queue yet). */
	struct spool_chunk *fill;
	/* The consumer's chunk being read, and where. */
	struct spool_chunk *cur;
	size_t pos;
	char *readbuf; /* a chunk read back from the file */
};

/* 0, or -errno. mem_max: the bytes held in memory (0: SPOOL_MEM_MAX). */
int spool_init(struct spool *q, size_t mem_max);
void spool_free(struct spool *q);

/*
 * Producer: appends a record (size <= SPOOL_RECORD_MAX) that carries events operations (what a
 * chunk lost on the way counts). False when out of memory.
 */
bool spool_put(struct spool *q, const void *data, size_t size, uint32_t events);
/* Producer: makes what was put visible to the consumer. Whether anything was. */
bool spool_commit(struct spool *q);

/*
 * Consumer: the next record (valid until the next call), or NULL when the queue is empty. A chunk
 * that cannot be read back from the file is skipped, its records' operations added to *lost.
 */
const void *spool_get(struct spool *q, size_t *size, uint64_t *lost);

/* Bytes committed and not yet taken (either thread). */
uint64_t spool_backlog(struct spool *q);

#endif
