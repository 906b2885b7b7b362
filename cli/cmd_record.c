/*
 * closuretrace record: trace every closure probe of a running process (-p PID) or of a command
 * started held until the probes are attached, into a JSON Lines trace (docs/trace-format.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "elf_probes.h"
#include "launch.h"
#include "record_shared.h"
#include "session.h"
#include "sink.h"
#include "trace_writer.h"

#define DEFAULT_BUFFER_SIZE (16u << 20)
#define UPROBE_SYSFS	    "/sys/bus/event_source/devices/uprobe"
#define MAX_OBJECTS	    256

struct record_options {
	pid_t pid;
	const char *output;
	double duration;
	size_t buffer_size;
	bool verbose;
	bool per_op; /* the per-operation probes even when the library offers batches */
	bool no_bpf; /* the in-process sink even when BPF is permitted */
	char **argv; /* the command, or NULL with -p */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace record [OPTIONS] -p PID\n"
		"       closuretrace record [OPTIONS] -- COMMAND [ARGS...]\n"
		"\n"
		"Records every closure operation of a process into a trace (JSON Lines).\n"
		"\n"
		"  -p, --pid PID          attach to a running process\n"
		"  -o, --output FILE      write the trace to FILE (default closuretrace.json;\n"
		"                         an existing file is kept as FILE.old; '-' for stdout)\n"
		"  -d, --duration SECS    stop after SECS seconds\n"
		"  -b, --buffer-size N    ring buffer bytes, a power of two (K, M suffixes;\n"
		"                         default 16M)\n"
		"      --per-op           take each operation from its own probe (a trap per\n"
		"                         operation), even when libclosure offers batches\n"
		"      --no-bpf           run the command with the in-process sink (libclosure\n"
		"                         writes its own events; the default without BPF\n"
		"                         permission; not with -p)\n"
		"  -v, --verbose          say what is attached\n"
		"  -h, --help             this help\n"
		"\n"
		"Recording stops when the process exits, on Ctrl-C or SIGTERM, or after\n"
		"--duration; a launched command is then sent the same signal (SIGTERM for\n"
		"--duration). The trace is complete, with its trailer, in every case.\n");
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "closuretrace record: %s%s%s; see 'closuretrace record --help'\n", msg,
		arg ? ": " : "", arg ? arg : "");
	return EXIT_USAGE;
}

int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end || v < 4096 || (v & (v - 1)) || v > (1ull << 31))
		return -1;
	*out = v;
	return 0;
}

/* Fills *o; returns -1 to go on, or the exit status to stop with (after --help: 0). */
static int parse_options(int argc, char **argv, struct record_options *o)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{"duration", required_argument, NULL, 'd'},
		{"buffer-size", required_argument, NULL, 'b'},
		{"verbose", no_argument, NULL, 'v'},
		{"per-op", no_argument, NULL, 'P'},
		{"no-bpf", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	*o = (struct record_options){.output = "closuretrace.json",
				     .buffer_size = DEFAULT_BUFFER_SIZE};
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:d:b:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			long pid = strtol(optarg, &end, 10);

			if (*end || end == optarg || pid <= 0 || pid > 0x3fffffff)
				return usage_error("not a process id", optarg);
			o->pid = (pid_t)pid;
			break;
		}
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration > 0))
				return usage_error("--duration needs a positive number of seconds",
						   optarg);
			break;
		case 'b':
			if (parse_size(optarg, &o->buffer_size))
				return usage_error(
					"--buffer-size must be a power of two from 4K to 2G",
					optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'P':
			o->per_op = true;
			break;
		case 'N':
			o->no_bpf = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK; /* help shown: stop, successfully */
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (!o->pid == !o->argv)
		return usage_error(o->pid ? "give either -p PID or a command, not both"
					  : "give -p PID or -- COMMAND",
				   NULL);
	return -1;
}

int permission_error(void)
{
	fprintf(stderr, "closuretrace: not permitted to use BPF and uprobes; run as root, or give "
			"closuretrace CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)\n");
	return EXIT_ENVIRONMENT;
}

int no_probes_error(const char *what)
{
	fprintf(stderr,
		"closuretrace: no closure probes in %s; link it with libclosure built with "
		"probes (CLOSURE_PROBES=ON)\n",
		what);
	return EXIT_ENVIRONMENT;
}

int load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		return permission_error();
	fprintf(stderr,
		"closuretrace: cannot load the BPF programs: %s; check that the kernel has "
		"BPF and BTF (/sys/kernel/btf/vmlinux)\n",
		strerror(-err));
	return EXIT_ENVIRONMENT;
}

/* The process's executable, as an absolute path (NULL when it cannot be read). */
static char *process_exe(pid_t pid)
{
	char link[64], buf[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

static int has_probes(const struct objects *o)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].has_probes)
			return 1;
	return 0;
}

/* Checks that a -p target exists and has probes, before anything is loaded. */
static int check_pid(pid_t pid, char **exe)
{
	struct objects objs = {0};
	char what[128];
	int scanned;

	if (kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, "closuretrace: no process with pid %d; check the pid (ps -p %d)\n",
			(int)pid, (int)pid);
		return EXIT_ENVIRONMENT;
	}
	*exe = process_exe(pid);
	scanned = objects_scan_maps(&objs, pid);
	if (scanned < 0 || !*exe) {
		objects_free(&objs);
		if (kill(pid, 0) && errno == ESRCH) /* it exited meanwhile */
			return check_pid(pid, exe);
		return permission_error();
	}
	scanned = has_probes(&objs);
	objects_free(&objs);
	if (!scanned) {
		snprintf(what, sizeof(what), "process %d", (int)pid);
		return no_probes_error(what);
	}
	return -1;
}

static int check_command(const char *path)
{
	char *objs[MAX_OBJECTS], what[4200];
	size_t n = elf_load_order(path, objs, MAX_OBJECTS);
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		found |= elf_has_closure_probes(objs[i]);
		free(objs[i]);
	}
	if (found)
		return -1;
	snprintf(what, sizeof(what), "%s or the libraries it loads", path);
	return no_probes_error(what);
}

static void summary(const struct trace_end *end, const char *output)
{
	fprintf(stderr, "closuretrace: %llu events, %llu lost, %.3f s, written to %s\n",
		(unsigned long long)end->events, (unsigned long long)end->lost,
		end->duration_ns / 1e9, strcmp(output, "-") ? output : "standard output");
}

/* The launched command's status once it has exited (else leaves end as it is). */
void child_status(pid_t pid, struct trace_end *end, bool block)
{
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
		;
	if (r != pid)
		return;
	if (WIFEXITED(status))
		end->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		end->signal = WTERMSIG(status);
}

static const char *const end_reasons[] = {"exit", "signal", "duration"};

/* record -- CMD without BPF: the command writes its own events (sink.h). */
static int record_sink(const struct record_options *o)
{
	struct trace_end end = {.exit_code = -1};
	char *exe = launch_resolve(o->argv[0]);
	FILE *out = NULL;
	bool probes;
	int ret;

	if (!exe) {
		fprintf(stderr, "closuretrace: cannot run %s: %s\n", o->argv[0], strerror(errno));
		return EXIT_USAGE;
	}
	out = trace_open(o->output);
	if (!out) {
		fprintf(stderr, "closuretrace: cannot write %s: %s\n", o->output, strerror(errno));
		free(exe);
		return EXIT_USAGE;
	}
	ret = sink_run(o->argv, exe, out, &end, &probes);
	if (ret < 0 && (fflush(out) || ferror(out))) {
		fprintf(stderr, "closuretrace: writing %s failed: %s\n", o->output, strerror(errno));
		ret = EXIT_ENVIRONMENT;
	} else if (ret < 0) {
		if (!probes)
			fprintf(stderr, "closuretrace: warning: no process of the command wrote "
					"closure events (is it linked with libclosure?)\n");
		summary(&end, o->output);
		ret = EXIT_OK;
	}
	fclose(out);
	free(exe);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o;
	struct launch child = {.gate = -1};
	struct session s;
	struct trace_end end = {.exit_code = -1};
	char *exe = NULL;
	FILE *out = NULL;
	int ret = parse_options(argc, argv, &o), err;
	enum session_end why;
	uint64_t start;

	if (ret >= 0)
		return ret;
	if (o.pid && o.no_bpf)
		return usage_error("--no-bpf cannot record a running process (-p): it was not "
				   "started with the sink",
				   NULL);
	if (!o.pid && (o.no_bpf || !sink_bpf_permitted()))
		return record_sink(&o);
	if (o.pid && !sink_bpf_permitted()) {
		fprintf(stderr, "closuretrace: not permitted to use BPF and uprobes: recording a "
				"running process (-p) needs root, or CAP_BPF and CAP_PERFMON "
				"(record -- COMMAND and check run without)\n");
		return EXIT_ENVIRONMENT;
	}
	if (access(UPROBE_SYSFS, F_OK)) {
		fprintf(stderr,
			"closuretrace: this kernel has no uprobes (%s is missing); use a "
			"kernel built with CONFIG_UPROBE_EVENTS=y\n",
			UPROBE_SYSFS);
		return EXIT_ENVIRONMENT;
	}
	if (o.pid) {
		ret = check_pid(o.pid, &exe);
		if (ret >= 0)
			goto out_exe;
	} else {
		exe = launch_resolve(o.argv[0]);
		if (!exe) {
			fprintf(stderr, "closuretrace: cannot run %s: %s\n", o.argv[0],
				strerror(errno));
			return EXIT_USAGE;
		}
		ret = check_command(exe);
		if (ret >= 0)
			goto out_exe;
		if (launch_start(&child, exe, o.argv)) {
			fprintf(stderr, "closuretrace: cannot start %s: %s\n", exe,
				strerror(errno));
			ret = EXIT_ENVIRONMENT;
			goto out_exe;
		}
	}

	if (session_init(&s, o.pid ? o.pid : child.pid, NULL)) {
		ret = EXIT_ENVIRONMENT;
		goto out_child;
	}
	s.verbose = o.verbose;
	s.per_op = o.per_op;
	s.launched = !o.pid;
	s.stop_on_load = s.launched;
	s.exe = exe;
	/* libbpf's per-site perf events even where uprobe_multi works: to test that path. */
	s.use_libbpf =
		getenv("CLOSURETRACE_ATTACH") && !strcmp(getenv("CLOSURETRACE_ATTACH"), "perf");
	err = session_load(&s, o.buffer_size);
	if (err) {
		ret = load_error(err);
		goto out_session;
	}
	if (s.launched) {
		err = session_attach_program(&s, exe); /* before it runs */
		if (err <= 0) {
			ret = err == -EPERM || err == -EACCES ? permission_error()
							      : no_probes_error(exe);
			goto out_session;
		}
	}

	err = session_watch_loader(&s, exe);
	if (err)
		fprintf(stderr,
			"closuretrace: warning: libraries loaded later (dlopen) may miss "
			"their first events: cannot watch the dynamic loader: %s\n",
			strerror(-err));

	out = trace_open(o.output);
	if (!out) {
		fprintf(stderr, "closuretrace: cannot write %s: %s\n", o.output, strerror(errno));
		ret = EXIT_USAGE;
		goto out_session;
	}
	s.out = out;
	start = session_now_ns();
	trace_write_header(out, s.pid, exe, o.argv, start);
	if (!s.launched) {
		session_scan(&s);
		if (!s.n_links && !s.n_link_fds) {
			ret = no_probes_error(exe);
			goto out_session;
		}
	}
	err = session_start(&s, start);
	if (err) {
		fprintf(stderr, "closuretrace: cannot watch process %d: %s\n", (int)s.pid,
			strerror(-err));
		ret = EXIT_ENVIRONMENT;
		goto out_session;
	}
	if (s.launched)
		launch_release(&child);
	if (o.verbose)
		fprintf(stderr, "closuretrace: recording process %d\n", (int)s.pid);

	why = session_run(&s, (uint64_t)(o.duration * 1e9));
	end.lost = session_finish(&s);
	end.events = s.events;
	end.duration_ns = session_now_ns() - start;
	end.reason = end_reasons[why];
	if (s.launched) /* it has exited, or was sent the stop signal and given a moment */
		child_status(child.pid, &end, why == SESSION_EXIT);
	trace_write_end(out, &end);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "closuretrace: writing %s failed: %s\n", o.output, strerror(errno));
		ret = EXIT_ENVIRONMENT;
	} else {
		summary(&end, o.output);
		ret = EXIT_OK;
	}
	child.pid = 0; /* reaped, or left running after a signal */

out_session:
	session_close(&s);
out_child:
	if (child.pid > 0)
		launch_abort(&child);
out_exe:
	if (out)
		fclose(out);
	free(exe);
	return ret;
}
