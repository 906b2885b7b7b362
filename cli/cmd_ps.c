/*
 * closuretrace ps: the live closures of a running (or hung) process, read from the list that
 * libclosure keeps in CLOSURE_DEBUG builds, as the kernel's debugfs "closures" file shows its
 * own. Nothing is attached and the process is not stopped: its memory is only read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "proc_mem.h"
#include "commands.h"
#include "live_list.h"
#include "objects.h"
#include "out_file.h"
#include "ps_tree.h"
#include "recorder.h"
#include "symbols.h"
#include "trace_text.h"

/* One line saying what to do; every case is the environment's (exit 3). */
static int refuse(enum live_status st, pid_t pid, const struct live_list *l)
{
	char lib[PATH_MAX * TEXT_ESCAPE_MAX];
	int p = (int)pid;

	/* The path of an object the process mapped: no escape sequence reaches the terminal. */
	text_visible(lib, sizeof(lib), l->library ? l->library : "?");
	switch (st) {
	case LIVE_NO_PROCESS:
		return no_process_error(pid);
	case LIVE_NOT_PERMITTED:
		fprintf(stderr,
			"closuretrace: not permitted to read the memory of process %d; run as root "
			"or as its owner with ptrace rights (kernel.yama.ptrace_scope)\n",
			p);
		break;
	case LIVE_NO_LIBCLOSURE:
		fprintf(stderr,
			"closuretrace: process %d has no libclosure that describes its live "
			"closures; link it with libclosure\n",
			p);
		break;
	case LIVE_NO_LIST:
		fprintf(stderr,
			"closuretrace: libclosure in process %d (%s) keeps no list of live "
			"closures (a libclosure older than its live registry, built without "
			"CLOSURE_DEBUG); link the program with this libclosure and run it again\n",
			p, lib);
		break;
	case LIVE_NEWER:
		fprintf(stderr,
			"closuretrace: libclosure in process %d (%s) describes its list in version "
			"%u, newer than this closuretrace reads (%d); use a newer closuretrace\n",
			p, lib, l->info.version, CLOSURE_DEBUG_VERSION);
		break;
	case LIVE_BAD_DESCRIPTOR:
	case LIVE_OK:
		fprintf(stderr,
			"closuretrace: the live-list descriptor of libclosure in process %d (%s) "
			"cannot be read as one; rebuild the program with this libclosure\n",
			p, lib);
		break;
	}
	return EXIT_ENVIRONMENT;
}

/* A symbolizer over every ELF object the process maps (NULL on failure). */
static struct symbols *symbols_of(const struct objects *objs)
{
	struct symbols *s = symbols_new();

	for (size_t i = 0; s && i < objs->n; i++)
		if (objs->v[i].elf)
			symbols_add_object(s, objs->v[i].path, objs->v[i].file, objs->v[i].bias);
	return s;
}

static int run_ps(pid_t pid, bool json)
{
	struct objects objs = {0};
	struct live_list list;
	struct ps_view view = {.pid = pid, .list = &list};
	char exe[PATH_MAX];
	struct timespec now;
	enum live_status st;
	int ret = EXIT_OK;

	st = live_list_read(pid, &objs, &list);
	if (st != LIVE_OK) {
		ret = refuse(st, pid, &list);
		objects_free(&objs);
		return ret;
	}
	/* The library's times are CLOCK_MONOTONIC, one clock for every process of the machine. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	view.now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	view.exe = proc_exe(pid, exe, sizeof(exe)) ? exe : "?";
	view.syms = symbols_of(&objs);
	if (!view.syms) {
		fprintf(stderr, "closuretrace: out of memory\n");
		ret = EXIT_ENVIRONMENT;
	} else {
		struct out_file out;
		int failed;

		out_open(&out, "closuretrace ps", NULL); /* standard output: cannot fail */
		failed = json ? ps_print_json(stdout, &view) : 0;
		if (!json)
			ps_print_text(stdout, &view);
		if (out_commit(&out)) { /* as report's: a full disk, a closed pipe's error */
			ret = EXIT_USAGE;
		} else if (failed) { /* not the output: the JSON could not be built */
			fprintf(stderr, "closuretrace: out of memory\n");
			ret = EXIT_ENVIRONMENT;
		}
	}
	symbols_free(view.syms);
	live_list_free(&list);
	objects_free(&objs);
	return ret;
}

int cmd_ps(int argc, char **argv)
{
	struct pid_list pids = {0};
	bool json = false;
	const struct opt opts[] = {
		OPTION(OPT_PIDS, 'p', "pid", &pids, "PID", "the process"),
		OPTION(OPT_FLAG, 0, "json", &json, NULL, "the tree as JSON"),
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "ps",
		.synopsis =
			"usage: closuretrace ps [--json] -p PID\n"
			"\n"
			"Lists the live closures of a running or hung process, as a tree: each\n"
			"closure's address, count and flags (Q queued on a workqueue, R running,\n"
			"S sleeping in closure_sync, W on a waitlist, D destructor), "
			"continuation,\n"
			"where it was initialised or last continued, and what it waits on. Reads\n"
			"the list that libclosure keeps when built with CLOSURE_DEBUG, from the\n"
			"process's memory, without stopping it (needs root or ptrace rights).\n",
		.opts = opts,
	};
	pid_t pid;
	int ret = args_parse_only(&cl, argc, argv);

	if (ret >= 0)
		return ret;
	if (args_one_pid("ps", &pids, &pid))
		return EXIT_USAGE;
	return run_ps(pid, json);
}
