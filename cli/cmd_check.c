/*
 * closuretrace check: the CI leak check. Runs a command traced (following what it forks and
 * execs), then reports its leaked and stuck closures as compiler-style diagnostics on standard
 * error, and exits non-zero when there are any, as valgrind --error-exitcode and LeakSanitizer do.
 *
 * The recorder's records go straight into the model report builds (check_live.h), converted as
 * the trace's reader would read them back: one definition of what a leak is, and no file. The
 * trace is written only when asked: --keep-trace FILE (for graph, report, explain), or a
 * temporary one for --export, which loads the trace file itself: removed once exported, kept
 * where the warning says when the export fails (no run is lost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "check_diag.h"
#include "check_live.h"
#include "check_sarif.h"
#include "check_supp.h"
#include "viz.h"
#include "commands.h"
#include "export.h"
#include "leaks.h"
#include "model.h"
#include "out_file.h"
#include "recorder.h"
#include "temp_dir.h"
#include "trace_reader.h"
#include "trace_out.h"
#include "trace_writer.h"

#define DEFAULT_BUFFER_SIZE (64u << 20) /* a test suite is bursty: room for 700k events */

struct check_options {
	int error_exitcode;
	size_t buffer_size;
	const char *sarif, *keep_trace, *gen_suppressions;
	const char *log_file; /* --log-file's pattern (%p: our pid), or NULL */
	char **suppressions;  /* every --suppressions FILE, in order */
	size_t n_suppressions;
	bool allow_lost;
	bool no_bpf;	     /* the in-process sink even when BPF is permitted */
	bool per_op;	     /* the per-operation probes even when libclosure offers batches */
	long stacks;	     /* --stacks N: frames at each init and get (0: none) */
	uint64_t timeout_ns; /* 0: none */
	struct export_opts export; /* export.url NULL: no --export */
	struct export_labels labels;
	char **argv;
	int command_stderr; /* recorder_opts.command_stderr: --log-file's */
};

static int exitcode_arg(void *code, const char *arg, const char *cmd)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg || v < 0 || v > 255)
		return args_error(cmd, "--error-exitcode needs a number from 0 to 255", arg);
	*(int *)code = (int)v;
	return 0;
}

static int suppressions_arg(void *o, const char *arg, const char *cmd)
{
	struct check_options *co = o;

	(void)cmd;
	co->suppressions[co->n_suppressions++] = (char *)arg; /* argv's own */
	return 0;
}

static int keep_arg(void *keep, const char *arg, const char *cmd)
{
	if (!strcmp(arg, "-")) /* standard output is the command's */
		return args_error(cmd, "--keep-trace needs a file", arg);
	*(const char **)keep = arg;
	return 0;
}

/* --log-file FILE: a file, with %p (our pid) and %% (a %) and no other %. */
static int log_file_arg(void *log, const char *arg, const char *cmd)
{
	if (!*arg || !strcmp(arg, "-")) /* standard error is the command's */
		return args_error(cmd, "--log-file needs a file", arg);
	for (const char *p = strchr(arg, '%'); p; p = strchr(p + 2, '%'))
		if (p[1] != 'p' && p[1] != '%')
			return args_error(
				cmd, "--log-file takes %p (check's pid) and %% (a %), no other %",
				arg);
	*(const char **)log = arg;
	return 0;
}

/*
 * --log-file: our standard error is the file from the moment it is open, so that every line of
 * ours (the recorder's, libbpf's, the export's too) goes there, while the command is given the
 * standard error we were given (recorder_opts.command_stderr). The file is an output as any other
 * (out_file.h: written beside it, renamed over it at the end).
 */
struct check_log {
	struct out_file out;
	char path[4096];
	int saved; /* our standard error as we were given it (close-on-exec); -1: it was closed */
	bool on;
};

/* %p and %% of pattern put in. 0, or -1 when the name is too long. */
static int log_path(const char *pattern, char *path, size_t len)
{
	size_t n = 0;
	int w;

	for (const char *p = pattern; *p && n < len; p++) {
		if (*p != '%') {
			path[n++] = *p;
			continue;
		}
		w = *++p == 'p' ? snprintf(path + n, len - n, "%d", (int)getpid())
				: snprintf(path + n, len - n, "%%");
		n += (size_t)w;
	}
	if (n >= len)
		return -1;
	path[n] = '\0';
	return 0;
}

/* Opens the log and makes it our standard error: 0, or EXIT_USAGE after saying why (on the
 * standard error we were given). */
static int log_begin(struct check_log *l, const char *pattern)
{
	if (log_path(pattern, l->path, sizeof(l->path)))
		return args_error("check", "--log-file: the name is too long", pattern);
	/* Before the log is open: its file could take descriptor 2 were it closed. */
	l->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (l->saved < 0 && errno != EBADF) {
		fprintf(stderr, "closuretrace check: cannot keep standard error: %s\n",
			strerror(errno));
		return EXIT_ENVIRONMENT;
	}
	if (out_open(&l->out, "closuretrace check", l->path)) {
		if (l->saved >= 0)
			close(l->saved);
		return EXIT_USAGE;
	}
	fflush(stderr);
	if (fileno(l->out.f) != STDERR_FILENO && dup2(fileno(l->out.f), STDERR_FILENO) < 0) {
		fprintf(stderr, "closuretrace check: cannot write %s: %s\n", l->path,
			strerror(errno));
		if (l->saved >= 0)
			close(l->saved);
		out_abort(&l->out);
		return EXIT_USAGE;
	}
	clearerr(stderr);
	l->on = true;
	return 0;
}

/* Our standard error back as it was, the log put in place: 0, or -1 after saying why there. */
static int log_end(struct check_log *l)
{
	bool failed;
	int err;

	if (!l->on)
		return 0;
	l->on = false;
	failed = fflush(stderr) || ferror(stderr);
	/* Why a line was lost: stderr keeps no errno, one more byte (the log is dropped) tells. */
	err = failed && write(STDERR_FILENO, "\n", 1) < 0 ? errno : EIO;
	if (l->saved >= 0) {
		dup2(l->saved, STDERR_FILENO);
		close(l->saved);
	} else if (fileno(l->out.f) != STDERR_FILENO) {
		close(STDERR_FILENO);
	}
	clearerr(stderr);
	if (failed) {
		out_abort(&l->out);
		fprintf(stderr, "closuretrace check: cannot write %s: %s\n", l->path,
			trace_out_strerror(err));
		return -1;
	}
	return out_commit(&l->out);
}

/* --gen-suppressions FILE, written whole or not at all. 0, or -1 after saying why. */
static int write_suppressions(const struct check_diags *d, const char *path)
{
	struct out_file f;
	unsigned n;

	if (out_open(&f, "closuretrace check", path))
		return -1;
	n = check_diags_write_suppressions(d, f.f);
	if (out_commit(&f))
		return -1;
	fprintf(stderr, "closuretrace: wrote %u suppression%s to %s\n", n, n == 1 ? "" : "s", path);
	return 0;
}

static const char check_synopsis[] =
	"usage: closuretrace check [OPTIONS] -- COMMAND [ARGS...]\n"
	"\n"
	"Runs COMMAND traced, with every process it starts, and reports the closures\n"
	"that leaked or are stuck when it exits as FILE:LINE: error: diagnostics on\n"
	"standard error (--log-file: in FILE). The command's input and output are left\n"
	"alone.\n";
static const char check_epilogue[] =
	"Exit status: the command's own when it failed (128+N when signal N killed it),\n"
	"else N (1) when closures leaked or events were lost, else 0; 2 bad usage,\n"
	"3 BPF refused or no closure probes; 124 --timeout ended the command;\n"
	"128+N check was stopped by signal N.\n";

/* Returns -1 to go on, or an exit status. */
static int parse_options(int argc, char **argv, struct check_options *o)
{
	const struct opt opts[] = {
		OPTION(OPT_CALL, 0, "error-exitcode", &o->error_exitcode, "N",
		       "exit status when closures leaked (default 1; 0: never fail\non leaks)",
		       .call = exitcode_arg),
		OPTION(OPT_CALL, 0, "suppressions", o, "FILE",
		       "hide the diagnostics that FILE names (see the man\npage; may be given more "
		       "than "
		       "once)",
		       .call = suppressions_arg),
		OPTION(OPT_STRING, 0, "sarif", &o->sarif, "FILE",
		       "also write the diagnostics as SARIF 2.1.0"),
		OPTION(OPT_STRING, 0, "gen-suppressions", &o->gen_suppressions, "FILE",
		       "write a suppression entry for each error reported\n(as valgrind's "
		       "--gen-suppressions; give it back with\n--suppressions FILE)"),
		OPTION(OPT_CALL, 0, "keep-trace", &o->keep_trace, "FILE",
		       "keep the trace (for graph, report, explain)", .call = keep_arg),
		OPTION(OPT_FLAG, 0, "allow-lost", &o->allow_lost, NULL,
		       "do not fail when events were lost (the verdict is\nthen incomplete)"),
		OPTION(OPT_FLAG, 0, "no-bpf", &o->no_bpf, NULL,
		       "run it with the in-process sink (libclosure writes its\nown events; the "
		       "default "
		       "without BPF permission)"),
		OPTION(OPT_FLAG, 0, "per-op", &o->per_op, NULL,
		       "take each operation from its own probe (a trap per\noperation) even when "
		       "libclosure offers batches"),
		OPTION_STACKS(&o->stacks),
		OPTION(OPT_DURATION, 0, "timeout", &o->timeout_ns, "TIME",
		       "end the command after TIME (2.5s, 500ms; bare: seconds;\nSIGTERM, SIGKILL "
		       "2 s "
		       "later) and report what it was stuck on"),
		OPTION(OPT_CALL, 0, "export", &o->export.url, "URL",
		       "also load the trace and its verdicts into ClickHouse\n"
		       "(http://HOST:PORT/DATABASE; closuretrace-export(1));\n"
		       "a failed export is a warning, never the exit status,\n"
		       "and keeps the trace where it says",
		       .call = export_url_opt),
		OPTION(OPT_CALL, 0, "label", &o->labels, "KEY=VALUE",
		       "a label of the run for --export (repeatable)", .call = export_label_opt),
		OPTION(OPT_CALL, 0, "log-file", &o->log_file, "FILE",
		       "write check's own lines to FILE, not to standard error\n(%p: check's pid); "
		       "the command's output stays its own",
		       .call = log_file_arg),
		OPTION(OPT_SIZE, 'b', "buffer-size", &o->buffer_size, "N",
		       "ring buffer bytes, a power of two (K, M suffixes;\ndefault 64M)"),
		OPTION_MAX_MEMORY,
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "check",
		.synopsis = check_synopsis,
		.epilogue = check_epilogue,
		.opts = opts,
		.stop_at_argument = true,
	};
	int next, ret;

	*o = (struct check_options){.error_exitcode = EXIT_LEAKS,
				    .buffer_size = DEFAULT_BUFFER_SIZE};
	o->suppressions = calloc(argc, sizeof(*o->suppressions));
	if (!o->suppressions)
		return EXIT_ENVIRONMENT;
	ret = args_parse(&cl, argc, argv, &next);
	if (ret >= 0)
		return ret;
	if (next == argc)
		return args_error("check",
				  "give the command to check: closuretrace check -- COMMAND", NULL);
	o->argv = argv + next;
	if (o->labels.n && !o->export.url)
		return args_error("check", "--label goes with --export URL", NULL);
	if (o->stacks && o->no_bpf)
		return args_error("check", "--stacks needs the BPF probes: not with --no-bpf",
				  NULL);
	o->export.meta.labels = o->labels.v;
	o->export.meta.nlabels = o->labels.n;
	return -1;
}

/* A temporary trace file (--export without --keep-trace), removed once exported (kept, and said,
 * when the export fails). */
static FILE *temp_trace(char *path, size_t len)
{
	int fd;
	FILE *f;

	snprintf(path, len, "%s/closuretrace-check-XXXXXX.json", temp_dir());
	fd = mkostemps(path, 5, O_CLOEXEC);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
	}
	return f;
}

/* The trace when one is written: --keep-trace's file, or a temporary one for --export. */
struct check_out {
	const char *keep;
	struct trace_out kept;
	char temp[4096];
	FILE *f;
};

static FILE *open_trace(void *ctx, const char **temp)
{
	struct check_out *out = ctx;

	if (out->keep)
		out->f = trace_out_open(&out->kept, out->keep, trace_out_zstd_name(out->keep))
				 ? NULL
				 : out->kept.f;
	else
		out->f = temp_trace(out->temp, sizeof(out->temp));
	*temp = out->keep ? out->kept.temp : out->temp;
	if (!out->f) {
		out->temp[0] = '\0';
		fprintf(stderr, "closuretrace: cannot write the trace %s: %s\n",
			out->keep ? out->keep : "in $TMPDIR", trace_out_strerror(errno));
	}
	return out->f;
}

static void summary(const struct check_diags *d, const struct recorder_result *r, size_t shown,
		    bool cut)
{
	unsigned long closures = d->closures - d->suppressed_closures;

	/* Cut short, "no leaks" would claim what was not judged. */
	if (!shown && cut)
		fprintf(stderr, "closuretrace: nothing stuck, no root of a hang found");
	else if (!shown)
		fprintf(stderr, "closuretrace: no leaks");
	else
		fprintf(stderr, "closuretrace: %zu error%s: %lu closure%s leaked or stuck", shown,
			shown == 1 ? "" : "s", closures, closures == 1 ? "" : "s");
	if (d->suppressed_closures)
		fprintf(stderr, " (%lu suppressed)", d->suppressed_closures);
	fprintf(stderr, "; %llu event%s, %llu lost\n", (unsigned long long)r->events,
		r->events == 1 ? "" : "s", (unsigned long long)r->lost);
	if (d->in_flight)
		fprintf(stderr,
			"closuretrace: note: the recording was cut short: %lu closure%s in "
			"flight then %s not judged\n",
			d->in_flight, d->in_flight == 1 ? "" : "s",
			d->in_flight == 1 ? "was" : "were");
	if (d->late)
		fprintf(stderr,
			"closuretrace: note: %lu closure%s seen again after finishing, without an "
			"init (an event that reached the trace late): not judged\n",
			d->late, d->late == 1 ? " was" : "s were");
}

/* Says why the recording was cut short; the exit status for it. */
static int cut_short(const struct check_options *o, const struct recorder_result *r)
{
	if (r->end == RECORDER_TIMEOUT) {
		fprintf(stderr,
			"closuretrace: %s did not finish within %.3g s: ended it; what it hangs "
			"on follows (closures still at work are not judged)\n",
			o->argv[0], o->timeout_ns / 1e9);
		return EXIT_TIMEOUT;
	}
	fprintf(stderr,
		"closuretrace: check was stopped by signal %d (%s) before %s finished; its "
		"closures still in flight are not judged\n",
		r->stop_signal, strsignal(r->stop_signal), o->argv[0]);
	return 128 + r->stop_signal;
}

/* The exit status once the diagnostics are out: the command's failure first. */
static int verdict(const struct check_options *o, const struct recorder_result *r, size_t shown)
{
	if (r->lost && o->allow_lost)
		fprintf(stderr,
			"closuretrace: warning: %llu event%s lost: the verdict is incomplete\n",
			(unsigned long long)r->lost, r->lost == 1 ? " was" : "s were");
	else if (r->lost)
		fprintf(stderr,
			"closuretrace: %llu event%s lost: the verdict is incomplete; %s, or "
			"accept it with --allow-lost\n",
			(unsigned long long)r->lost, r->lost == 1 ? " was" : "s were",
			r->sink ? "free space in $TMPDIR (the sink's folder)"
				: "rerun with a larger --buffer-size");
	if (r->exit_code > 0)
		return r->exit_code;
	if (r->lost && !o->allow_lost)
		return o->error_exitcode ? o->error_exitcode : EXIT_LEAKS;
	return shown ? o->error_exitcode : EXIT_OK;
}

/*
 * Runs the command traced into live's model, and into out when a trace is asked for: -1, or an
 * exit status after saying why.
 */
static int run_command(const struct check_options *o, struct check_out *out,
		       struct check_live *live, struct recorder_result *run)
{
	bool file = o->keep_trace || o->export.url;
	int ret = recorder_run(&(struct recorder_opts){.argv = o->argv,
						       .buffer_size = o->buffer_size,
						       .timeout_ns = o->timeout_ns,
						       .quiet = true,
						       .no_bpf = o->no_bpf,
						       .per_op = o->per_op,
						       .stacks = (unsigned)o->stacks,
						       /* a check is timed whole: pages the command
							  never reaches are not worth touching */
						       .cold_ring = true,
						       .command_stderr = o->command_stderr,
						       .consumer = &check_live_consumer,
						       .consumer_ctx = live},
			       file ? open_trace : NULL, out, run);

	if (ret >= 0 && !o->keep_trace && out->f)
		fclose(out->f);
	if (ret >= 0 || !file)
		trace_out_abort(&out->kept); /* refused: --keep-trace's file is left as it was */
	else if (o->keep_trace ? trace_out_commit(&out->kept, true) : fclose(out->f)) {
		fprintf(stderr, "closuretrace: writing the trace %s failed: %s\n",
			o->keep_trace ? o->keep_trace : out->temp, trace_out_strerror(errno));
		ret = EXIT_USAGE; /* as record's: an output that cannot be written */
	}
	return ret;
}

/* A run whose closures are not judged (killed, or no probes): its exit status; else -1. */
static int nothing_to_judge(const struct check_options *o, const struct recorder_result *run,
			    int cut)
{
	char what[4200];

	if (run->signal && !cut) {
		/* Whatever was in flight when it died would read as leaks: report the death. */
		fprintf(stderr,
			"closuretrace: %s was killed by signal %d (%s); its closures were not "
			"checked\n",
			o->argv[0], run->signal, strsignal(run->signal));
		return 128 + run->signal;
	}
	if (run->probes)
		return -1;
	/* Stopped before any program with probes ran: the stop is the news (128+N, as said). */
	if (run->end == RECORDER_SIGNAL)
		return cut;
	snprintf(what, sizeof(what), "%s or the programs it ran", o->argv[0]);
	if (run->exit_code <= 0)
		return no_probes_error(what);
	fprintf(stderr,
		"closuretrace: %s exited with status %d, and ran no program with closure probes: "
		"nothing to check\n",
		o->argv[0], run->exit_code);
	return run->exit_code;
}

/* --sarif FILE: written whole or not at all, as every output (out_file.h). 0, or -1 after saying
 * why. */
static int write_sarif(const struct check_diags *d, const char *path)
{
	struct trace_error err = {0};
	struct out_file out;

	if (out_open(&out, "closuretrace check", path))
		return -1;
	if (check_sarif_write(d, out.f, CLOSURETRACE_VERSION, &err)) {
		out_abort(&out);
		fprintf(stderr, "closuretrace: %s\n", err.text);
		return -1;
	}
	return out_commit(&out);
}

int cmd_check(int argc, char **argv)
{
	struct check_options o;
	struct check_supp supp = {0};
	struct check_verdict judged = {0};
	struct check_diags *diags = &judged.diags;
	struct trace_error err = {0};
	struct recorder_result run;
	struct check_out out = {0};
	struct check_live live = {.v = &judged};
	struct check_log log = {0};
	const char *trace_path;
	size_t shown = 0;
	int cut = 0; /* the recording was cut short: the exit status for it */
	int ret = parse_options(argc, argv, &o);

	if (ret >= 0 || (o.log_file && (ret = log_begin(&log, o.log_file)))) {
		free(o.suppressions);
		return ret;
	}
	if (log.on)
		o.command_stderr = log.saved >= 0 ? log.saved : -1;
	for (size_t i = 0; i < o.n_suppressions; i++)
		if (check_supp_load(&supp, o.suppressions[i], &err)) {
			fprintf(stderr, "%s%s\n", err.placed ? "" : "closuretrace: ", err.text);
			ret = EXIT_USAGE;
			goto out;
		}
	/* Said before the command runs, as a --keep-trace that cannot be written. */
	if (o.sarif && trace_out_writable(o.sarif)) {
		fprintf(stderr, "closuretrace: cannot write %s: %s\n", o.sarif,
			trace_out_strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	out.keep = o.keep_trace;
	check_verdict_begin(&judged);
	ret = run_command(&o, &out, &live, &run);
	trace_path = o.keep_trace ? o.keep_trace : out.temp;
	if (ret >= 0)
		goto out;
	if (run.end == RECORDER_TIMEOUT || run.end == RECORDER_SIGNAL)
		cut = cut_short(&o, &run);
	ret = nothing_to_judge(&o, &run, cut);
	if (ret >= 0)
		goto out;
	if (live.out_of_memory || check_verdict_judge(&judged)) {
		fprintf(stderr, "closuretrace: out of memory\n");
		ret = EXIT_ENVIRONMENT;
		goto out;
	}
	check_diags_suppress(diags, &supp);
	for (size_t i = 0; i < diags->n; i++)
		shown += !diags->v[i].suppressed;
	check_diags_print(diags, stderr);
	if (o.gen_suppressions && write_suppressions(diags, o.gen_suppressions)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.sarif && write_sarif(diags, o.sarif)) {
		ret = EXIT_USAGE;
		goto out;
	}
	summary(diags, &run, shown, cut != 0);
	if (run.exit_code > 0)
		fprintf(stderr, "closuretrace: %s exited with status %d\n", o.argv[0],
			run.exit_code);
	ret = cut ? cut : verdict(&o, &run, shown);
	/* Not exported: the trace stays where the warning says, for the export that ends it. */
	if (o.export.url && export_after_run(trace_path, &o.export) && !o.keep_trace)
		out.temp[0] = '\0';
out:
	check_verdict_free(&judged);
	check_supp_free(&supp);
	free(o.suppressions);
	if (out.temp[0])
		unlink(out.temp);
	trace_out_abort(&out.kept);
	if (log_end(&log))
		ret = EXIT_USAGE; /* as --sarif's: an output that cannot be written */
	return ret;
}
