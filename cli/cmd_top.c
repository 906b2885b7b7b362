/*
 * closuretrace top -p PID: a live view of a running process, refreshed every interval, as top(1)
 * and perf top: its closures in flight by kind, with rates, ages, lifetimes and suspects. The
 * recorder of record feeds the model of report; nothing is written to disk.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "out_file.h"
#include "recorder.h"
#include "top_term.h"
#include "top_view.h"

#define DEFAULT_BUFFER_SIZE (32u << 20)
/* How often the recorder's ring buffer is read and the keyboard looked at. */
#define POLL_MS 25

struct top_opts {
	struct pid_list pids;
	pid_t pid;
	uint64_t interval_ns;
	long frames; /* batch: how many; 0: until the process exits */
	bool batch;
	uint32_t sample_every; /* --sample N (0: every tree) */
};

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	const struct opt opts[] = {
		OPTION(OPT_PIDS, 'p', "pid", &o->pids, "PID", "the process (root: BPF)"),
		OPTION(OPT_DURATION, 'd', "delay", &o->interval_ns, "TIME",
		       "the interval between frames (default 1s; 500ms, 2.5)", .min = 0.1,
		       .max = 3600),
		OPTION(OPT_FLAG, 'b', "batch", &o->batch, NULL,
		       "plain text frames on standard output, for scripts"),
		OPTION(OPT_INT, 'n', "iterations", &o->frames, "N", "stop after N frames", .min = 1,
		       .max = 1000000),
		OPTION(OPT_CALL, 0, "sample", &o->sample_every, "N",
		       "look at one root closure in N with all its\ndescendants (whole trees or "
		       "nothing)",
		       .call = sample_opt),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "top",
		.synopsis = "usage: closuretrace top [-b] [-n N] [-d SECS] [--sample N] -p PID\n"
			    "\n"
			    "A live view of a running process's closures, refreshed every "
			    "interval: the\n"
			    "closures in flight by kind (init function -> continuation, init "
			    "site),\n"
			    "created and finished per second, the oldest one's age, the lifetimes\n"
			    "of the finished ones (p50, p99), and suspects (!): in flight far\n"
			    "longer than the finished closures of their kind.\n"
			    "Sorted by closures in flight. q or Ctrl-C quits.\n",
		.opts = opts,
	};
	int ret = args_parse_only(&cl, argc, argv);

	if (ret >= 0)
		return ret;
	return args_one_pid("top", &o->pids, &o->pid) ? EXIT_USAGE : -1;
}

/* One frame: plain text in batch mode, else the screen redrawn from its top left corner. False
 * when it could not be written (a full disk, a closed pipe): top then stops. */
static bool show(struct top_view *v, const struct top_opts *o, struct out_file *out, uint64_t now)
{
	int rows = 0, cols = 0;

	top_view_update(v, now);
	if (o->batch) {
		top_view_print(v, stdout, 0, 0);
		putchar('\n');
	} else {
		term_size(&rows, &cols);
		fputs("\033[H\033[2J", stdout);
		top_view_print(v, stdout, rows, cols);
	}
	fflush(stdout);
	return !out_failed(out);
}

/* Until the process exits, a stop signal, q, or the last frame. */
static void run(struct recorder *r, struct top_view *v, const struct top_opts *o,
		struct out_file *out)
{
	uint64_t step = o->interval_ns, next = recorder_now_ns() + step;
	long shown = 0;
	int key;

	for (;;) {
		uint64_t now = recorder_now_ns();
		int ms = next > now ? (int)((next - now) / 1000000) : 0;

		if (recorder_poll(r, ms < POLL_MS ? ms : POLL_MS) != RECORDER_RUNNING)
			break;
		while (!o->batch && (key = term_key()) >= 0)
			if (key == 'q' || key == 'Q' || key == 3 /* Ctrl-C */)
				return;
		now = recorder_now_ns();
		if (now < next)
			continue;
		if (!show(v, o, out, now))
			return;
		next += step;
		if (next < now)
			next = now + step; /* a frame took longer than the interval */
		if (o->frames && ++shown == o->frames)
			return;
	}
}

int cmd_top(int argc, char **argv)
{
	static const struct recorder_consumer consumer = {.event = top_view_event};
	struct top_opts o = {.interval_ns = 1000000000};
	struct recorder_result res;
	struct out_file out;
	struct recorder *r;
	struct top_view *v;
	int status = parse_args(argc, argv, &o);

	if (status >= 0)
		return status;
	/* Before attaching: a refusal costs nothing, and leaves the process untouched. */
	if (!o.batch && !term_available()) {
		fprintf(stderr, "closuretrace top: standard input and output are not a terminal; "
				"use -b for plain text\n");
		return EXIT_USAGE;
	}
	v = top_view_new(o.pid, recorder_now_ns());
	if (!v) {
		fprintf(stderr, "closuretrace: out of memory\n");
		return EXIT_ENVIRONMENT;
	}
	top_view_sample(v, o.sample_every);
	r = recorder_new(&(struct recorder_opts){.pid = o.pid,
						 .buffer_size = DEFAULT_BUFFER_SIZE,
						 .quiet = true,
						 .sample_every = o.sample_every,
						 .consumer = &consumer,
						 .consumer_ctx = v},
			 &status);
	if (!r) {
		top_view_free(v);
		return status;
	}
	status = recorder_start(r, NULL, NULL);
	top_view_begin(v, recorder_now_ns());
	if (!status) {
		if (!o.batch && term_enter()) {
			fprintf(stderr, "closuretrace top: standard input and output are not a "
					"terminal; use -b for plain text\n");
			status = EXIT_USAGE;
		} else {
			out_open(&out, "closuretrace top", NULL); /* standard output: cannot fail */
			run(r, v, &o, &out);
			term_leave();
			if (out_commit(
				    &out)) /* the frames, as report's text: a failed write is 2 */
				status = EXIT_USAGE;
		}
	}
	recorder_abandon(r); /* no frame comes after: quit without decoding the backlog */
	recorder_request_stop(r);
	recorder_stop(r, &res);
	recorder_free(r);
	top_view_free(v);
	return status;
}
