/*
 * A queue of raw ring-buffer records between two threads: the drain thread puts what it copies
 * out of the ring buffer, the recorder's loop takes it to decode and write. The queue holds up to
 * mem_max bytes in memory; past it, the queue spills: chunks go to an unnamed file in $TMPDIR
 * (O_TMPFILE: a killed recorder leaves nothing behind), written by a thread of the spool's own so
 * that the producer never waits for the disk, and are read back in their turn. A writer that falls
 * behind so costs disk, not loss and not memory without bound. Only when the disk does not keep up
 * either (twice mem_max held) are chunks refused, their operations counted.
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
/* What the queue holds in memory before it spills to its file. */
#define SPOOL_MEM_MAX (64u << 20)

/* The environment variable that sets the recorder's memory for the queue (bytes; tests). */
#define SPOOL_MEM_ENV "CLOSURETRACE_SPOOL_MEM"

struct spool_chunk;

struct spool {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the file's writer: chunks to write, or stop */
	pthread_cond_t done; /* the consumer: a chunk was written */
	pthread_t writer;
	bool writer_started, stop;
	struct spool_chunk *head, *tail; /* in memory, oldest first: read first */
	bool spill;		     /* then: the file's chunks, the one being written, pending */
	struct spool_chunk *writing; /* being written to the file */
	struct spool_chunk *phead, *ptail; /* to be written, oldest first */
	uint64_t file_read, file_end;	   /* the file's unread chunks, [file_read, file_end) */
	uint64_t punched;		   /* the file's blocks before it are given back */
	int fd;				   /* the file (-1 until the first spill) */
	char **free;			   /* chunk buffers kept for reuse */
	size_t n_free;
	size_t mem; /* bytes of chunk buffers the queue holds */
	size_t mem_max;
	uint64_t queued;      /* bytes committed and not taken */
	uint64_t queued_max;  /* the most queued at once */
	uint64_t spooled;     /* bytes written to the file, in all */
	uint64_t file_events; /* operations in the file's unread chunks */
	int err;	      /* the file's first failure (errno): what is left stays in memory */
	/* The producer's chunk being filled (not in the queue yet). */
	struct spool_chunk *fill;
	/* The consumer's chunk being read, and where. */
	struct spool_chunk *cur;
	size_t pos;
	char *readbuf; /* a chunk read back from the file */
};

/* 0, or -errno. mem_max: the bytes held in memory (0: SPOOL_MEM_MAX). The file's writer
 * starts at the first spill. */
int spool_init(struct spool *q, size_t mem_max);
/* Stops the file's writer, frees everything. */
void spool_free(struct spool *q);

/*
 * Producer: appends a record (size <= SPOOL_RECORD_MAX) that carries events operations (what a
 * chunk lost on the way counts). False when out of memory.
 */
bool spool_put(struct spool *q, const void *data, size_t size, uint32_t events);
/* Producer: makes what was put visible to the consumer. Whether anything was. */
bool spool_commit(struct spool *q);

/*
 * Consumer: the next record (valid until the next call), or NULL when the queue is empty (it
 * waits for a chunk being written). A chunk that cannot be read back from the file is skipped,
 * its operations added to *lost.
 */
const void *spool_get(struct spool *q, size_t *size, uint64_t *lost);

/* Bytes committed and not yet taken (either thread). */
uint64_t spool_backlog(struct spool *q);

#endif
