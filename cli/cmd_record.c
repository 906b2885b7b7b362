/*
 * closuretrace record: trace every closure probe of a running process (-p PID) or of a command
 * started held until the probes are attached, into a JSON Lines trace (docs/trace-format.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "export.h"
#include "recorder.h"
#include "trace_out.h"

/* 64M: a ring buffer that lasts the drain thread's longest waits for a CPU on a loaded machine
 * (blockio under record -p lost 0-45 % at 16M with the load at 17 on 2 CPUs, 0 at 64M). */
#define DEFAULT_BUFFER_SIZE (64u << 20)
#define STOP_WAIT_NS	    (2000000000ull) /* a stopped recording waits this long for the command */

struct record_options {
	struct pid_list pids;
	pid_t pid;
	const char *output;
	uint64_t duration_ns;
	size_t buffer_size;
	bool verbose;
	bool per_op;	       /* the per-operation probes even when libclosure offers batches */
	bool no_bpf;	       /* the in-process sink even when BPF is permitted */
	bool compress;	       /* zstd, whatever the output's name */
	uint32_t sample_every; /* --sample N (0: every tree) */
	long stacks;	       /* --stacks N: frames at each init and get (0: none) */
	char **argv;	       /* the command, or NULL with -p */
	struct export_opts export; /* export.url NULL: no --export */
	struct export_labels labels;
};

/* What the options say together (after args_parse): -1 to go on, or EXIT_USAGE after saying why. */
static int check_options(struct record_options *o)
{
	o->export.meta.labels = o->labels.v;
	o->export.meta.nlabels = o->labels.n;
	if (o->labels.n && !o->export.url)
		return args_error("record", "--label goes with --export URL", NULL);
	if (o->export.url && !strcmp(o->output, "-"))
		return args_error("record", "--export reads the trace back: give -o FILE, not -",
				  NULL);
	if (o->pids.n && args_one_pid("record", &o->pids, &o->pid))
		return EXIT_USAGE;
	if (o->pid && o->no_bpf)
		return args_error("record",
				  "--no-bpf cannot record a running process (-p): it was not "
				  "started with the sink",
				  NULL);
	if (o->stacks && o->no_bpf)
		return args_error("record", "--stacks needs the BPF probes: not with --no-bpf",
				  NULL);
	if (o->sample_every && o->stacks)
		return args_error("record",
				  "--sample needs the batched transport: not with --stacks", NULL);
	if (o->sample_every && (o->per_op || o->no_bpf))
		return args_error("record",
				  "--sample needs the batched transport: not with --per-op or "
				  "--no-bpf",
				  NULL);
	if (!o->pid == !o->argv)
		return args_error("record",
				  o->pid ? "give either -p PID or a command, not both"
					 : "give -p PID or -- COMMAND",
				  NULL);
	return -1;
}

/* Fills *o; returns -1 to go on, or the exit status to stop with (after --help: 0). */
static int parse_options(int argc, char **argv, struct record_options *o)
{
	const struct opt opts[] = {
		OPTION(OPT_PIDS, 'p', "pid", &o->pids, "PID", "attach to a running process"),
		OPTION(OPT_STRING, 'o', "output", &o->output, "FILE",
		       "write the trace to FILE (default " DEFAULT_TRACE ";\nan existing file is "
		       "kept as FILE.old; '-' for stdout;\na name ending in .zst is written "
		       "compressed)"),
		OPTION(OPT_FLAG, 'z', "compress", &o->compress, NULL,
		       "write the trace compressed with zstd whatever its name\n(every command "
		       "reads "
		       "it as it reads a plain one)"),
		OPTION(OPT_CALL, 0, "sample", &o->sample_every, "N",
		       "record one root closure in N with all its\ndescendants (whole trees or "
		       "nothing; the trailer\ncounts the trees left out)",
		       .call = sample_opt),
		OPTION(OPT_DURATION, 'd', "duration", &o->duration_ns, "TIME",
		       "stop after TIME (1.5, 1s, 500ms; bare: seconds)"),
		OPTION(OPT_SIZE, 'b', "buffer-size", &o->buffer_size, "N",
		       "ring buffer bytes, a power of two (K, M suffixes;\ndefault 64M)"),
		OPTION(OPT_FLAG, 0, "per-op", &o->per_op, NULL,
		       "take each operation from its own probe (a trap per\noperation), even when "
		       "libclosure offers batches"),
		OPTION_STACKS(&o->stacks),
		OPTION(OPT_FLAG, 0, "no-bpf", &o->no_bpf, NULL,
		       "run the command with the in-process sink (libclosure\nwrites its own "
		       "events; the "
		       "default without BPF\npermission; not with -p)"),
		OPTION(OPT_CALL, 0, "export", &o->export.url, "URL",
		       "then load the trace into ClickHouse\n(http://HOST:PORT/DATABASE; "
		       "closuretrace-export(1));\na failed export is a warning",
		       .call = export_url_opt),
		OPTION(OPT_CALL, 0, "label", &o->labels, "KEY=VALUE",
		       "a label of the run for --export (repeatable)", .call = export_label_opt),
		OPTION(OPT_FLAG, 'v', "verbose", &o->verbose, NULL, "say what is attached"),
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "record",
		.synopsis =
			"usage: closuretrace record [OPTIONS] -p PID\n"
			"       closuretrace record [OPTIONS] -- COMMAND [ARGS...]\n"
			"\n"
			"Records every closure operation of a process into a trace (JSON Lines).\n",
		.epilogue =
			"Recording stops when the process exits, on Ctrl-C or SIGTERM, or after\n"
			"--duration; a launched command is then sent the same signal (SIGTERM for\n"
			"--duration). The trace is complete, with its trailer, in every case.\n",
		.opts = opts,
		.stop_at_argument = true,
	};
	int next, ret;

	*o = (struct record_options){.output = DEFAULT_TRACE, .buffer_size = DEFAULT_BUFFER_SIZE};
	ret = args_parse(&cl, argc, argv, &next);
	if (ret >= 0)
		return ret;
	if (next < argc)
		o->argv = argv + next;
	return check_options(o);
}

static void summary(const struct recorder_result *r, const char *name)
{
	fprintf(stderr, "closuretrace: %llu event%s, %llu lost, %.3f s, written to %s\n",
		(unsigned long long)r->events, r->events == 1 ? "" : "s",
		(unsigned long long)r->lost, r->duration_ns / 1e9, name);
}

/* After the run: the trace in place and the summary, or what went wrong. */
static int finish(const struct record_options *o, struct trace_out *out,
		  const struct recorder_result *r)
{
	const char *name = strcmp(o->output, "-") ? o->output : "standard output";

	/* A write that failed (the header is written at once) is the news, before the probes. */
	if (!r->probes && o->argv && r->end != RECORDER_WRITE) {
		char what[4200];

		trace_out_abort(out);
		snprintf(what, sizeof(what), "%s or the programs it ran", o->argv[0]);
		return no_probes_error(what);
	}
	if (r->end == RECORDER_WRITE || trace_out_commit(out, true)) {
		trace_out_abort(out);
		fprintf(stderr, "closuretrace: writing %s failed: %s; free some space or give -o\n",
			name,
			trace_out_strerror(r->end == RECORDER_WRITE ? r->write_errno : errno));
		return EXIT_USAGE;
	}
	summary(r, name);
	if (r->n_running) {
		fprintf(stderr, "closuretrace: left running, no longer recorded:");
		for (size_t i = 0; i < r->n_running; i++)
			fprintf(stderr, " %d", (int)r->running[i]);
		fprintf(stderr, "%s\n", r->n_running == RECORDER_MAX_RUNNING ? " ..." : "");
	}
	/* Nothing of the command ran: its status is the news (128+N for signal N, as a shell). */
	if (r->not_started && r->signal)
		return 128 + r->signal;
	if (r->not_started && r->exit_code > 0)
		return r->exit_code;
	return EXIT_OK;
}

/* The trace file and how to write it. */
struct output {
	struct trace_out out;
	bool compress;
};

/* The trace file, opened once the recorder is ready (recorder_open_fn). */
static FILE *open_output(void *ctx, const char **temp)
{
	struct output *o = ctx;
	struct trace_out *out = &o->out;
	const char *path = out->target;

	/*
	 * The target is the file written from the start: a recorder killed leaves it readable up
	 * to its last complete line (no `end` line), and nothing hidden for the guard to remove.
	 */
	if (trace_out_open(out, path, o->compress || trace_out_zstd_name(path)) ||
	    trace_out_place(out, true)) {
		fprintf(stderr, "closuretrace: cannot write %s: %s\n", path,
			trace_out_strerror(errno));
		trace_out_abort(out);
		return NULL;
	}
	*temp = out->temp;
	return out->f;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o;
	struct recorder_result res;
	struct output out = {0};
	int ret = parse_options(argc, argv, &o);

	if (ret >= 0)
		return ret;
	out.out.target = o.output;
	out.compress = o.compress;
	ret = recorder_run(&(struct recorder_opts){.pid = o.pid,
						   .argv = o.argv,
						   .buffer_size = o.buffer_size,
						   .duration_ns = o.duration_ns,
						   .stop_wait_ns = STOP_WAIT_NS,
						   .verbose = o.verbose,
						   .per_op = o.per_op,
						   .stacks = (unsigned)o.stacks,
						   .no_bpf = o.no_bpf,
						   .sample_every = o.sample_every,
						   .stdout_to_stderr = !strcmp(o.output, "-")},
			   open_output, &out, &res);
	if (ret < 0)
		ret = finish(&o, &out.out, &res);
	if (ret == EXIT_OK && o.export.url)
		export_after_run(o.output, &o.export);
	trace_out_abort(&out.out); /* after a refusal: nothing of it is left */
	return ret;
}
