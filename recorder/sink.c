/* The in-process sink, the tool's side: see sink.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "batch_decode.h"
#include "closure_batch.h"
#include "exit_status.h"
#include "launch.h"
#include "recorder.h"
#include "session.h"
#include "sink.h"
#include "sink_read.h"
#include "temp_dir.h"
#include "trace_writer.h"

bool sink_bpf_permitted(void)
{
	libbpf_set_print(NULL);
	return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) == 1;
}

static void wait_command(pid_t pid, struct recorder_result *res)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	launch_exit_of(status, &res->exit_code, &res->signal);
}

/* The files of the sink directory into the trace, then its trailer. */
static void write_trace(struct session *s, const char *dir, struct recorder_result *res)
{
	struct trace_end end = {.exit_code = res->exit_code, .signal = res->signal};
	struct sink_totals t = {0};

	sink_read_dir(s, dir, &t);
	res->probes = t.processes > 0;
	batch_decoder_flush(s->batches.decoder);
	session_retry_pending(s);
	res->events = end.events = s->out.events;
	res->lost = end.lost = s->batches.dropped + t.lost + t.cut;
	end.lost_claimed = s->batches.dropped; /* the processes' own count */
	res->end = RECORDER_EXIT;
	end.duration_ns = res->duration_ns;
	end.reason = trace_end_name((enum trace_end_reason)res->end);
	end.abrupt = t.abrupt;
	if (t.lost)
		fprintf(stderr,
			"closuretrace: warning: %" PRIu64 " events could not be kept in %s (a full "
			"file system?): free space there, or name another folder with TMPDIR\n",
			t.lost, dir);
	if (t.cut)
		fprintf(stderr,
			"closuretrace: warning: %" PRIu64 " events were being recorded when their "
			"process died: lost\n",
			t.cut);
	if (s->out.file)
		trace_write_end(s->out.file, &end);
	if (s->opts->consumer && s->opts->consumer->end)
		s->opts->consumer->end(s->opts->consumer_ctx, &end);
}

/* DIR/closuretrace-sink.XXXXXX in $TMPDIR (else /tmp): NULL after saying why. */
static char *make_dir(void)
{
	char *dir;

	if (asprintf(&dir, "%s/closuretrace-sink.XXXXXX", temp_dir()) < 0)
		return NULL;
	if (mkdtemp(dir))
		return dir;
	fprintf(stderr, "closuretrace: cannot make the sink folder %s: %s\n", dir, strerror(errno));
	free(dir);
	return NULL;
}

int sink_run(const struct recorder_opts *o, recorder_open_fn open_out, void *ctx,
	     struct recorder_result *res)
{
	struct launch child = {.gate = -1,
			       .stdout_to_stderr = o->stdout_to_stderr,
			       .stderr_fd = o->command_stderr};
	const char *temp = NULL;
	char *exe = launch_resolve(o->argv[0]), *dir = NULL;
	uint64_t start;
	struct session s;
	int ret = -1;

	*res = (struct recorder_result){.exit_code = -1, .sink = true};
	if (!exe) {
		fprintf(stderr, "closuretrace: cannot run %s: %s\n", o->argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	if (!(dir = make_dir()) || session_init(&s, getpid(), o)) {
		if (dir) {
			fprintf(stderr, "closuretrace: out of memory\n");
			rmdir(dir);
		}
		free(dir);
		free(exe);
		return EXIT_ENVIRONMENT;
	}
	s.procs.follow = true; /* events name their process */
	s.out.file = open_out ? open_out(ctx, &temp) : NULL;
	setenv(CLOSURE_SINK_ENV, dir, 1);
	if (!s.out.file && open_out) {
		ret = EXIT_USAGE;
	} else if (launch_start(&child, exe, o->argv)) {
		fprintf(stderr, "closuretrace: cannot start %s: %s\n", exe, strerror(errno));
		ret = EXIT_ENVIRONMENT;
	}
	unsetenv(CLOSURE_SINK_ENV);
	if (ret < 0) {
		start = recorder_now_ns();
		s.out.start_ns = start;
		res->pid = child.pid;
		if (s.out.file)
			trace_write_header(s.out.file, child.pid, exe, o->argv, start);
		if (s.opts->consumer && s.opts->consumer->start)
			s.opts->consumer->start(s.opts->consumer_ctx, child.pid, exe, start);
		launch_release(&child);
		wait_command(child.pid, res);
		res->duration_ns = recorder_now_ns() - start;
		write_trace(&s, dir, res);
	}
	s.out.file = NULL; /* the caller's */
	session_close(&s);
	rmdir(dir);
	free(dir);
	free(exe);
	return ret;
}
