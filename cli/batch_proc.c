/* A traced process's batch registry: see batch_proc.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "batch_proc.h"

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

static int poke(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

long batch_drain(struct batch_decoder *d, pid_t pid, uint64_t registry)
{
	struct closure_batch_registry reg;
	struct closure_batch_buf *b = malloc(sizeof(*b));
	uint64_t addr;
	long added = 0;
	int err = b ? peek(pid, registry, &reg, sizeof(reg)) : -ENOMEM;

	if (!err && (reg.magic != CLOSURE_BATCH_MAGIC || reg.version != CLOSURE_BATCH_VERSION ||
		     reg.record_size != sizeof(struct closure_batch_record)))
		err = -EPROTO;
	addr = (uint64_t)(uintptr_t)reg.head;
	for (unsigned i = 0; !err && addr && i < BATCH_DRAIN_MAX_BUFFERS; i++) {
		uint32_t n;

		err = peek(pid, addr, b, sizeof(*b));
		if (err)
			break;
		n = b->n < CLOSURE_BATCH_RECORDS ? b->n : CLOSURE_BATCH_RECORDS;
		added += (long)batch_decoder_feed(d, (uint32_t)pid, b->tid,
						  addr + offsetof(struct closure_batch_buf, rec),
						  b->rec, n);
		addr = (uint64_t)(uintptr_t)b->next;
	}
	free(b);
	return err ? err : added;
}

int batch_ack(pid_t pid, uint64_t registry, uint64_t handed)
{
	return poke(pid, registry + offsetof(struct closure_batch_registry, consumed), &handed,
		    sizeof(handed));
}

int batch_set_wait_limit(pid_t pid, uint64_t registry, uint64_t limit)
{
	return poke(pid, registry + offsetof(struct closure_batch_registry, wait_limit), &limit,
		    sizeof(limit));
}
