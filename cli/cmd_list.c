/* closuretrace list: the closure probes of a binary (and the libraries it loads) or a process. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "closure_probes.h"
#include "commands.h"
#include "elf_probes.h"
#include "objects.h"
#include "out_file.h"
#include "recorder.h"
#include "trace_text.h"

#define MAX_OBJECTS 256

/* Argument names by probe, from the contract (closure_probes.h). */
static const char *const common_args[] = {CLOSURE_PROBE_COMMON_ARGS};
static const char *const module_args[] = {CLOSURE_PROBE_MODULE_ARGS};
static const char *const batch_args[] = {CLOSURE_PROBE_BATCH_ARGS};
static const struct {
	const char *probe;
	const char *extra[3];
} extra_args[] = {
#define PROBE_ARGS(name, NAME, a4, a5, a6)                                                         \
	{#name, {CLOSURE_ARG_NAME(a4), CLOSURE_ARG_NAME(a5), CLOSURE_ARG_NAME(a6)}},
	CLOSURE_PROBE_LIST(PROBE_ARGS)
#undef PROBE_ARGS
};

static const char *arg_name(const char *probe, int i)
{
	if (!strcmp(probe, CLOSURE_PROBE_MODULE))
		return i < 2 ? module_args[i] : NULL;
	if (!strcmp(probe, CLOSURE_PROBE_BATCH))
		return i < 6 ? batch_args[i] : NULL;
	if (i < 4)
		return common_args[i];
	for (size_t k = 0; k < sizeof(extra_args) / sizeof(extra_args[0]); k++)
		if (!strcmp(extra_args[k].probe, probe))
			return i < 7 ? extra_args[k].extra[i - 4] : NULL;
	return NULL;
}

/*
 * One probe. The object's path, the probe's name and its argument specs are the object's own (a
 * binary anyone may have built): shown as every name is (trace_text.h).
 */
static void print_probe(const char *path, const struct elf_probe *p)
{
	char *args = text_visible_dup(p->args), *save = NULL, *spec;
	char *shown_path = text_visible_dup(path), *name = text_visible_dup(p->name);
	int i = 0;

	if (!args || !shown_path || !name) {
		fprintf(stderr, "closuretrace list: out of memory\n");
		exit(EXIT_ENVIRONMENT);
	}
	printf("usdt:%s:closure:%s  %u site%s ", shown_path, name, p->sites,
	       p->sites == 1 ? "" : "s");
	for (spec = strtok_r(args, " ", &save); spec; spec = strtok_r(NULL, " ", &save), i++) {
		const char *arg = arg_name(p->name, i);

		if (arg)
			printf(" %s:%s", arg, spec);
		else
			printf(" arg%d:%s", i, spec);
	}
	putchar('\n');
	free(args);
	free(shown_path);
	free(name);
}

/* Prints the probes of one object; returns how many it has. */
static size_t list_object(const char *path, bool verbose)
{
	struct elf_probes probes;
	size_t n;

	if (elf_probes_read(path, &probes))
		return 0;
	for (size_t i = 0; i < probes.n; i++) {
		print_probe(path, &probes.probes[i]);
		if (verbose)
			printf("    first site 0x%llx semaphore 0x%llx\n",
			       (unsigned long long)probes.probes[i].first_pc,
			       (unsigned long long)probes.probes[i].semaphore);
	}
	n = probes.n;
	elf_probes_free(&probes);
	return n;
}

static int list_binary(struct out_file *out, const char *file, bool verbose)
{
	char *objs[MAX_OBJECTS], what[PATH_MAX * TEXT_ESCAPE_MAX + 32],
		shown[PATH_MAX * TEXT_ESCAPE_MAX];
	size_t n, found = 0;

	if (access(file, R_OK) || !elf_is_elf(file)) {
		fprintf(stderr, "closuretrace list: cannot read %s as an ELF file: %s\n",
			text_visible(what, sizeof(what), file),
			errno ? strerror(errno) : "not ELF");
		return EXIT_USAGE;
	}
	n = elf_load_order(file, objs, MAX_OBJECTS);
	for (size_t i = 0; i < n; i++) {
		if (!out_failed(out)) /* standard output written to the end, or not at all */
			found += list_object(objs[i], verbose);
		free(objs[i]);
	}
	if (found)
		return EXIT_OK;
	text_snprintf(what, sizeof(what), "%s or the libraries it loads",
		      text_visible(shown, sizeof(shown), file));
	return no_probes_error(what);
}

static int list_pid(struct out_file *out, pid_t pid, bool verbose)
{
	struct objects objs = {0};
	size_t found = 0;

	if (objects_scan_maps(&objs, pid) < 0) {
		if (kill(pid, 0) && errno == ESRCH)
			return no_process_error(pid);
		fprintf(stderr,
			"closuretrace: not permitted to read the maps of process %d; "
			"run as root or as its owner\n",
			(int)pid);
		return EXIT_ENVIRONMENT;
	}
	for (size_t i = 0; i < objs.n && !out_failed(out); i++)
		if (objs.v[i].has_probes)
			found += list_object(objs.v[i].file, verbose);
	objects_free(&objs);
	return found ? EXIT_OK : no_probes_in_process(pid);
}

int cmd_list(int argc, char **argv)
{
	struct pid_list pids = {0};
	bool verbose = false;
	const struct opt opts[] = {
		OPTION(OPT_PIDS, 'p', "pid", &pids, "PID", "a running process"),
		OPTION(OPT_FLAG, 'v', "verbose", &verbose, NULL,
		       "after each probe, the address of its first site and of\nits semaphore"),
		OPTION_END,
	};
	const struct cmdline cl = {
		.cmd = "list",
		.synopsis =
			"usage: closuretrace list [-v] BINARY\n"
			"       closuretrace list [-v] -p PID\n"
			"\n"
			"Lists the closure probes of a binary and the libraries it loads, or of "
			"every\n"
			"object a running process maps: one line per probe, as "
			"usdt:OBJECT:closure:NAME,\n"
			"its number of sites and its arguments (name:spec of the first site).\n",
		.opts = opts,
	};
	struct out_file out;
	pid_t pid = 0;
	int next, status = args_parse(&cl, argc, argv, &next);

	if (status >= 0)
		return status;
	if (pids.n > 1)
		return args_error("list", "-p takes one process id here, not a list", NULL);
	pid = pids.n ? pids.v[0] : 0;
	if (!pid == (next + 1 != argc))
		return args_error("list", "give one BINARY or -p PID", NULL);
	out_open(&out, "closuretrace list", NULL); /* standard output: cannot fail */
	errno = 0;
	status = pid ? list_pid(&out, pid, verbose) : list_binary(&out, argv[next], verbose);
	/* A listing cut short (a full disk, a closed pipe) is an error, whatever was found. */
	return out_commit(&out) ? EXIT_USAGE : status;
}
