/*
 * The in-process sink: the transport without BPF. CLOSURETRACE_SINK=DIR (set by closuretrace
 * check or record when BPF is not permitted) makes each process image write DIR/PID.T, its
 * stream (batches and the module records needed to symbolize after it exits), and keep every
 * thread buffer in a file DIR/PID.T.K mapped shared: page-cache pages outlive a killed process,
 * so the tool finds there what was not handed over. What cannot be kept (a full directory) is
 * counted in the stream's header, itself mapped. Everything after start-up is async-signal safe:
 * a thread may claim its buffer or hand it over in a signal handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "batch_sink.h"
#include "clock.h"

#define HEADER	     sizeof(struct closure_sink_file)
#define BUFFER_FILE  (HEADER + sizeof(struct closure_batch_buf))
#define RETRY_NS     (10 * 1000 * 1000ull) /* after a buffer file could not be made */
#define OWNER_RETIRE 2

_Static_assert(sizeof(struct closure_sink_file) == 64, "sink file header");

bool closure_batch_sink_on;
static char dir[PATH_MAX - 64]; /* room for "/PID.T.K" */
static int stream_fd = -1;
static struct closure_sink_file *stream; /* the stream's header, mapped */
static uint32_t image_pid, next_index;
static uint64_t image_ts, retry_after;

/* Appends v in decimal at p (snprintf is not async-signal safe); returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = d[--n];
	return p;
}

/* DIR/PID.T, or DIR/PID.T.K when k. */
static void file_path(char *path, uint32_t k)
{
	size_t len = strlen(dir);
	char *p;

	memcpy(path, dir, len);
	p = path + len;
	*p++ = '/';
	p = put_u64(p, image_pid);
	*p++ = '.';
	p = put_u64(p, image_ts);
	if (k) {
		*p++ = '.';
		p = put_u64(p, k);
	}
	*p = '\0';
}

/* Gives the file its blocks now, so that a store into its mapping never meets a full disk. */
static bool reserve(int fd, size_t size)
{
	static const char zeros[4096];

	if (!fallocate(fd, 0, 0, (off_t)size))
		return true;
	if (errno != EOPNOTSUPP)
		return false;
	for (size_t off = 0; off < size; off += sizeof(zeros)) {
		size_t n = size - off < sizeof(zeros) ? size - off : sizeof(zeros);

		if (pwrite(fd, zeros, n, (off_t)off) != (ssize_t)n)
			return false;
	}
	return true;
}

/* Creates file k of this image with size bytes mapped shared at at (NULL: anywhere). */
static void *make_file(uint32_t k, size_t size, void *at, int flags, int *fd_out)
{
	char path[PATH_MAX];
	void *m = MAP_FAILED;
	int fd;

	file_path(path, k);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | flags, 0600);
	if (fd < 0)
		return NULL;
	if (reserve(fd, size))
		m = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0), fd,
			 0);
	if (m == MAP_FAILED) {
		close(fd);
		unlink(path);
		return NULL;
	}
	*(struct closure_sink_file *)m = (struct closure_sink_file){
		.magic = CLOSURE_BATCH_MAGIC,
		.kind = k ? CLOSURE_SINK_BUFFER : CLOSURE_SINK_STREAM,
		.version = CLOSURE_SINK_VERSION,
		.pid = image_pid,
		.index = k,
		.image = image_ts,
	};
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	return m;
}

/* One chunk: header, a fixed part and a variable part, in one write (O_APPEND keeps it whole). */
static bool put_chunk(uint16_t kind, const void *fixed, size_t fixed_len, const void *var,
		      size_t var_len)
{
	struct closure_sink_chunk h = {
		.magic = CLOSURE_BATCH_MAGIC,
		.kind = kind,
		.version = CLOSURE_SINK_VERSION,
		.size = (uint32_t)(fixed_len + var_len),
		.pid = image_pid,
	};
	struct iovec v[3] = {{&h, sizeof(h)}, {(void *)fixed, fixed_len}, {(void *)var, var_len}};
	size_t total = sizeof(h) + fixed_len + var_len;

	if (!stream || __atomic_load_n(&stream->failed, __ATOMIC_RELAXED))
		return false;
	if (writev(stream_fd, v, 3) == (ssize_t)total)
		return true;
	/*
	 * A full disk: the write may have left part of the chunk. Nothing more is written (the
	 * stream would not parse past it, and the fd stays open: another thread may be writing);
	 * the tool knows the cut chunk is this one.
	 */
	__atomic_store_n(&stream->failed, 1, __ATOMIC_RELAXED);
	return false;
}

static int put_module(struct dl_phdr_info *info, size_t size, void *exe)
{
	const char *path = info->dlpi_name[0] ? info->dlpi_name : exe;
	uint64_t bias = info->dlpi_addr;

	(void)size;
	if (path[0] == '/')
		put_chunk(CLOSURE_SINK_MODULE, &bias, sizeof(bias), path, strlen(path));
	return 0;
}

static void put_modules(void)
{
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(put_module, exe);
}

/* A new image of this process (start-up, or a forked child): its stream, start and modules. */
static bool open_image(void)
{
	char exe[PATH_MAX] = "";
	ssize_t n;

	image_pid = (uint32_t)getpid();
	image_ts = closure_clock_ns();
	next_index = 0;
	retry_after = 0;
	stream = make_file(0, HEADER, NULL, O_APPEND, &stream_fd);
	if (!stream)
		return false;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	put_chunk(CLOSURE_SINK_START, &image_ts, sizeof(image_ts), exe, n > 0 ? (size_t)n : 0);
	put_modules();
	return true;
}

bool closure_batch_sink_start(void)
{
	/* Not in a setuid or setgid program: the caller would choose where it creates files. */
	const char *d = secure_getenv(CLOSURE_SINK_ENV);

	if (!d || d[0] != '/' || strlen(d) >= sizeof(dir))
		return false;
	strcpy(dir, d);
	closure_batch_sink_on = open_image();
	return closure_batch_sink_on;
}

/* A buffer in file k of this image, placed at at (NULL: anywhere). */
static struct closure_batch_buf *buffer_file(void *at)
{
	uint32_t k = __atomic_add_fetch(&next_index, 1, __ATOMIC_RELAXED);
	struct closure_sink_file *h = make_file(k, BUFFER_FILE, at, 0, NULL);
	struct closure_batch_buf *b;

	if (!h)
		return NULL;
	b = (struct closure_batch_buf *)(h + 1);
	b->sink = k;
	b->rec[0].seq = UINT32_MAX; /* not base + 0: slot 0 holds no record yet */
	__atomic_add_fetch(&stream->buffers, 1, __ATOMIC_RELAXED);
	return b;
}

struct closure_batch_buf *closure_batch_sink_buffer(void)
{
	uint64_t t = closure_clock_ns();
	struct closure_batch_buf *b;

	if (!stream || t < __atomic_load_n(&retry_after, __ATOMIC_RELAXED))
		return NULL; /* a full directory: not one attempt per operation */
	b = buffer_file(NULL);
	if (!b)
		__atomic_store_n(&retry_after, t + RETRY_NS, __ATOMIC_RELAXED);
	return b;
}

void closure_batch_sink_lost(uint32_t n)
{
	if (stream)
		__atomic_add_fetch(&stream->lost, n, __ATOMIC_RELAXED);
}

void closure_batch_sink_write(const struct closure_batch_buf *b, uint32_t n)
{
	struct closure_sink_batch h = {
		.tid = b->tid, .n = n, .dropped = b->dropped, .buf = b->sink};

	if (!closure_batch_sink_on || !(n || h.dropped))
		return;
	if (!put_chunk(CLOSURE_SINK_BATCH, &h, sizeof(h), b->rec, n * sizeof(b->rec[0])))
		closure_batch_sink_lost(n + h.dropped);
}

/*
 * Gives b memory of this process only, at the same address (b->next kept), never to be used.
 * false: b still maps the parent's file, and must not be written.
 */
static bool retire(struct closure_batch_buf *b)
{
	struct closure_batch_buf *next = b->next;
	char *at = (char *)b - HEADER;

	if (b->sink && mmap(at, BUFFER_FILE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		return false;
	b->next = next;
	b->owner = OWNER_RETIRE;
	return true;
}

enum closure_sink_fork closure_batch_sink_forked(struct closure_batch_buf *head,
						 struct closure_batch_buf **mine)
{
	struct closure_batch_buf *b, *next;
	bool on;

	if (!closure_batch_sink_on)
		return CLOSURE_SINK_FORK_OFF;
	munmap(stream, HEADER); /* the parent's */
	stream = NULL;
	close(stream_fd);
	stream_fd = -1;
	on = open_image();
	for (b = head; b; b = next) {
		next = b->next;
		if (b == *mine && b->sink && on && buffer_file((char *)b - HEADER)) {
			b->next = next;
			b->owner = 1;
		} else if (!retire(b)) {
			/* Out of memory: b is still the parent's; batching stops before a write. */
			closure_batch_sink_on = false;
			*mine = NULL;
			return CLOSURE_SINK_FORK_BROKEN;
		}
	}
	if (*mine && (*mine)->owner != 1)
		*mine = NULL;
	if (!on) { /* not traced: docs/probes.md says which children */
		closure_batch_sink_on = false;
		return CLOSURE_SINK_FORK_ENDED;
	}
	return CLOSURE_SINK_FORK_ON;
}

void closure_batch_sink_stop(void)
{
	uint64_t ts = closure_clock_ns();

	if (!closure_batch_sink_on)
		return;
	put_modules(); /* objects dlopen'ed since the start */
	put_chunk(CLOSURE_SINK_END, &ts, sizeof(ts), NULL, 0);
	__atomic_store_n(&stream->exited, 1, __ATOMIC_RELAXED);
}
