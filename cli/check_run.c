/* Running the checked command traced: see check_run.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "commands.h"
#include "launch.h"
#include "record_shared.h"
#include "session.h"
#include "sink.h"
#include "trace_writer.h"

/* Without BPF: the command writes its own batches (sink.h). */
static int check_run_sink(char **argv, const char *exe, FILE *out, struct check_run *r)
{
	struct trace_end end = {.exit_code = -1};
	int ret = sink_run(argv, exe, out, &end, &r->probes);

	r->exit_code = end.exit_code;
	r->signal = end.signal;
	r->events = end.events;
	r->lost = end.lost;
	return ret;
}

int check_run(char **argv, size_t buffer_size, bool no_bpf, FILE *out, struct check_run *r)
{
	static const char *const reasons[] = {"exit", "signal", "duration"};
	struct launch child = {.gate = -1};
	struct trace_end end = {.exit_code = -1};
	struct session s;
	char *exe = launch_resolve(argv[0]);
	int ret = -1, err;
	enum session_end why;
	uint64_t start;

	*r = (struct check_run){.exit_code = -1};
	if (!exe) {
		fprintf(stderr, "closuretrace: cannot run %s: %s\n", argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	if (no_bpf || !sink_bpf_permitted()) {
		ret = check_run_sink(argv, exe, out, r);
		free(exe);
		return ret;
	}
	if (launch_start(&child, exe, argv)) {
		fprintf(stderr, "closuretrace: cannot start %s: %s\n", exe, strerror(errno));
		free(exe);
		return EXIT_ENVIRONMENT;
	}
	if (session_init(&s, child.pid, out)) {
		ret = EXIT_ENVIRONMENT;
		goto out_child;
	}
	s.launched = true;
	s.stop_on_load = true; /* a dlopen'ed library is attached before its first operation */
	s.follow = true;
	s.quiet = true;
	s.exe = exe;
	err = session_load(&s, buffer_size);
	if (err) {
		ret = load_error(err);
		goto out_session;
	}
	/* Attached now, the command's own probes fire from its first instruction. */
	err = session_attach_program(&s, exe);
	if (err == -EPERM || err == -EACCES) {
		ret = permission_error();
		goto out_session;
	}
	/* Without it, a dlopen'ed library's first events may be missed: the verdict holds. */
	session_watch_loader(&s, exe);
	start = session_now_ns();
	trace_write_header(out, s.pid, exe, argv, start);
	err = session_start(&s, start);
	if (err) {
		fprintf(stderr, "closuretrace: cannot watch process %d: %s\n", (int)s.pid,
			strerror(-err));
		ret = EXIT_ENVIRONMENT;
		goto out_session;
	}
	launch_release(&child);

	why = session_run(&s, 0);
	end.lost = session_finish(&s);
	end.events = s.events;
	end.duration_ns = session_now_ns() - start;
	end.reason = reasons[why];
	child_status(child.pid, &end, true);
	child.pid = 0;
	r->exit_code = end.exit_code;
	r->signal = end.signal;
	trace_write_end(out, &end);
	r->events = end.events;
	r->lost = end.lost;
	r->probes = s.probes > 0;

out_session:
	session_close(&s);
out_child:
	if (child.pid > 0)
		launch_abort(&child);
	free(exe);
	return ret;
}
