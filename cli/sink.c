/* The in-process sink, the tool's side: see sink.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "batch_decode.h"
#include "closure_batch.h"
#include "commands.h"
#include "launch.h"
#include "record_shared.h"
#include "recorder.h"
#include "session.h"
#include "sink.h"
#include "trace_writer.h"

/* A chunk larger than a full batch is not libclosure's: the file is damaged. */
#define CHUNK_MAX (sizeof(struct closure_sink_batch) + CLOSURE_BATCH_RECORDS * 56 + 8)

bool sink_bpf_permitted(void)
{
	libbpf_set_print(NULL);
	return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) == 1;
}

/* One chunk of a process's file into the session. */
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
		session_on_module(s, path, bias);
	} else if (h->kind == CLOSURE_SINK_BATCH && h->size >= sizeof(struct closure_sink_batch)) {
		const struct closure_sink_batch *b = (const void *)p;

		if (h->size != sizeof(*b) + (size_t)b->n * sizeof(struct closure_batch_record))
			return;
		s->batch_dropped += b->dropped;
		/* Buffers are told apart by thread and image: an exec starts new buffers. */
		batch_decoder_feed(s->batch, h->pid, b->tid, (uint64_t)image << 32 | b->tid,
				   (const struct closure_batch_record *)(b + 1), b->n);
	}
}

/* Reads one process's file. false: it does not end with the process's exit handlers. */
static bool take_file(struct session *s, const char *path, unsigned *image)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(CHUNK_MAX);
	struct closure_sink_chunk h;
	bool ended = false;

	while (f && buf && fread(&h, sizeof(h), 1, f) == 1) {
		if (h.magic != CLOSURE_BATCH_MAGIC || h.version != CLOSURE_BATCH_VERSION ||
		    h.size > CHUNK_MAX || fread(buf, 1, h.size, f) != h.size) {
			fprintf(stderr, "closuretrace: warning: %s: damaged; read up to byte %ld\n",
				path, ftell(f));
			break;
		}
		if (h.kind == CLOSURE_SINK_START)
			++*image;
		ended = h.kind == CLOSURE_SINK_END;
		take_chunk(s, &h, buf, *image);
	}
	free(buf);
	if (f)
		fclose(f);
	return ended;
}

/* Every process file of dir into the session, then removes them. Files read. */
static unsigned take_dir(struct session *s, const char *dir, unsigned *abrupt)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned files = 0, image = 0;
	char path[4096];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		*abrupt += !take_file(s, path, &image);
		unlink(path);
		files++;
	}
	if (d)
		closedir(d);
	return files;
}

static void wait_command(pid_t pid, struct recorder_result *res)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* The files of the sink directory into the trace, then its trailer. */
static void write_trace(struct session *s, const char *dir, struct recorder_result *res)
{
	struct trace_end end = {.exit_code = res->exit_code, .signal = res->signal};
	unsigned abrupt = 0;

	res->probes = take_dir(s, dir, &abrupt) > 0;
	batch_decoder_flush(s->batch);
	session_retry_pending(s);
	res->events = end.events = s->events;
	res->lost = end.lost = s->batch_dropped;
	res->end = RECORDER_EXIT;
	end.duration_ns = res->duration_ns;
	end.reason = recorder_end_name(res->end);
	if (abrupt && !res->signal)
		fprintf(stderr,
			"closuretrace: warning: %u processes ended without their exit handlers "
			"(killed, or _exit): their last operations may be missing\n",
			abrupt);
	trace_write_end(s->out, &end);
}

int sink_run(const struct recorder_opts *o, recorder_open_fn open_out, void *ctx,
	     struct recorder_result *res)
{
	char dir[] = "/tmp/closuretrace-sink.XXXXXX";
	struct launch child = {.gate = -1, .stdout_to_stderr = o->stdout_to_stderr};
	const char *temp = NULL;
	char *exe = launch_resolve(o->argv[0]);
	uint64_t start;
	struct session s;
	int ret = -1;

	*res = (struct recorder_result){.exit_code = -1};
	if (!exe) {
		fprintf(stderr, "closuretrace: cannot run %s: %s\n", o->argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	if (!mkdtemp(dir) || session_init(&s, getpid())) {
		fprintf(stderr, "closuretrace: cannot make the sink directory: %s\n",
			strerror(errno));
		free(exe);
		return EXIT_ENVIRONMENT;
	}
	s.follow = true; /* events name their process */
	s.out = open_out(ctx, &temp);
	setenv(CLOSURE_SINK_ENV, dir, 1);
	if (!s.out) {
		ret = EXIT_USAGE;
	} else if (launch_start(&child, exe, o->argv)) {
		fprintf(stderr, "closuretrace: cannot start %s: %s\n", exe, strerror(errno));
		ret = EXIT_ENVIRONMENT;
	}
	unsetenv(CLOSURE_SINK_ENV);
	if (ret < 0) {
		start = session_now_ns();
		s.start_ns = start;
		res->pid = child.pid;
		trace_write_header(s.out, child.pid, exe, o->argv, start);
		launch_release(&child);
		wait_command(child.pid, res);
		res->duration_ns = session_now_ns() - start;
		write_trace(&s, dir, res);
	}
	s.out = NULL; /* the caller's */
	session_close(&s);
	rmdir(dir);
	free(exe);
	return ret;
}
