/* closuretrace: the table of subcommands, as perf has it. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "mem_limit.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"record", cmd_record, "trace a running process (-p PID) or a command into a trace file"},
	{"list", cmd_list, "list the closure probes of a binary or a process"},
	{"graph", cmd_graph, "draw the closure tree of a trace (Graphviz)"},
	{"report", cmd_report, "summarise a trace: closures by kind, lifetimes, leaks"},
	{"explain", cmd_explain, "the life of one closure, step by step"},
	{"check", cmd_check, "run a command traced; leaks as compiler-style errors (CI)"},
	{"top", cmd_top, "a live view of a running process: closures in flight by kind"},
	{"ps", cmd_ps, "the live closures of a running or hung process (CLOSURE_DEBUG builds)"},
	{"timeline", cmd_timeline, "the trace as Chrome/Perfetto trace-event JSON (timeline)"},
	{"export", cmd_export, "load a trace into ClickHouse (events, closures, verdicts)"},
	{"fleet", cmd_fleet, "ask ClickHouse across runs and hosts: top leaks, lifetimes, ..."},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: closuretrace COMMAND [OPTIONS]\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'closuretrace COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version")) {
		printf("closuretrace %s\n", CLOSURETRACE_VERSION);
		return EXIT_OK;
	}
	/* Every command under a limit (mem_limit.h): a pathological input ends with an error. A
	 * limit that cannot be set leaves the one the tool was started with. */
	mem_limit_set(mem_limit_default());
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "closuretrace: '%s' is not a command; see 'closuretrace --help'\n", name);
	return EXIT_USAGE;
}
