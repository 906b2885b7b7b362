/*
 * The command-line front of every closuretrace command: each describes its options in one table
 * (struct opt) that both reads the command line (args_parse) and writes --help (args_usage), as
 * perf's parse_options and usage_with_options do. One message shape for every mistake,
 *
 *   closuretrace CMD: WHAT[: ARG]; see 'closuretrace CMD --help'
 *
 * and exit status 2 (EXIT_USAGE); one reading of each kind of value (a duration with units, a
 * list of process ids, a buffer size), and the defaults the commands share.
 */
#ifndef CLOSURETRACE_ARGS_H
#define CLOSURETRACE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The trace that record writes and the viewers read when not told otherwise. */
#define DEFAULT_TRACE "closuretrace.json"

/* -p PID[,PID...] as perf takes it. */
#define PID_LIST_MAX 64
struct pid_list {
	size_t n;
	pid_t v[PID_LIST_MAX];
};

enum opt_kind {
	OPT_END,      /* the table's last entry */
	OPT_FLAG,     /* bool *: set */
	OPT_STRING,   /* const char **: the argument */
	OPT_DURATION, /* uint64_t *: nanoseconds, from a number with a unit (bare: seconds) */
	OPT_PIDS,     /* struct pid_list *: PID[,PID...] */
	OPT_INT,      /* long *: an integer from min to max */
	OPT_SIZE,     /* size_t *: a buffer size, a power of two from 4K to 2G, K/M/G suffixes */
	OPT_CALL,     /* call(value, arg, cmd): 0, or EXIT_USAGE after args_error */
};

struct opt {
	enum opt_kind kind;
	char short_name;       /* 0: only the long name */
	const char *long_name; /* without the dashes */
	void *value;
	const char *arg;  /* the argument's name in --help ("PID"); NULL for a flag */
	const char *help; /* --help's text; '\n' starts an indented line */
	double min, max;  /* OPT_INT: its range; OPT_DURATION: in seconds (0, 0: 1 us to 1e9 s) */
	int (*call)(void *value, const char *arg, const char *cmd);
};

/* One entry of a table; the optional fields (min, max, call) by name after the help. */
#define OPTION(k, s, l, v, a, h, ...)                                                              \
	{                                                                                          \
		.kind = (k), .short_name = (s), .long_name = (l), .value = (v), .arg = (a),        \
		.help = (h), __VA_ARGS__                                                           \
	}
#define OPTION_END                                                                                 \
	{                                                                                          \
		.kind = OPT_END                                                                    \
	}

struct cmdline {
	const char *cmd;      /* "record" */
	const char *synopsis; /* --help before the options: the usage lines and what it does */
	void (*more_synopsis)(FILE *out); /* what follows it, when it is not a constant (or NULL) */
	const char *epilogue;		  /* --help after the options, or NULL */
	const struct opt *opts;
	/* The options end at the first argument that is not one: what follows is the command to
	 * run, whose own options are its own (record, check). */
	bool stop_at_argument;
};

/*
 * Reads argv's options into the table's values (-h/--help are every command's). Returns -1 with
 * *next the index of the first argument that is not an option; or the exit status to end with:
 * EXIT_OK after --help, EXIT_USAGE after saying what is wrong.
 */
int args_parse(const struct cmdline *cl, int argc, char **argv, int *next);

/* args_parse for a command that takes options alone: -1 to go on, or the exit status to end
 * with (an argument left after the options is args_extra's mistake). */
int args_parse_only(const struct cmdline *cl, int argc, char **argv);

/* --help: the synopsis, each option of the table, the epilogue. */
void args_usage(const struct cmdline *cl, FILE *out);

/* "closuretrace CMD: WHAT[: ARG]; see 'closuretrace CMD --help'"; returns EXIT_USAGE. */
int args_error(const char *cmd, const char *what, const char *arg);

/* The one unknown-option message: args_error(cmd, "unknown option", opt). */
int args_unknown_option(const char *cmd, const char *opt);

/* An argument left after the options: args_error(cmd, "unexpected argument", arg). */
int args_extra(const char *cmd, const char *arg);

/* A process id, from 1 to 0x3fffffff (the kernel's PID_MAX_LIMIT): 0, or -1 when s is not one. */
int parse_pid(const char *s, pid_t *pid);

/* PID[,PID...] into *l: 0, or -1 when one is not a process id or there are too many. */
int parse_pid_list(const char *s, struct pid_list *l);

/* A command that reads one process: 0 with *pid, or EXIT_USAGE after args_error's "-p takes one
 * process id here" (none given: "give -p PID"). */
int args_one_pid(const char *cmd, const struct pid_list *l, pid_t *pid);

/* --timeout TIME as a double of seconds (parse_duration, bare: seconds), an OPT_CALL for what
 * hands seconds on (export's and fleet's libcurl timeouts). 0, or EXIT_USAGE after args_error. */
int args_timeout_seconds(void *seconds, const char *arg, const char *cmd);

/*
 * A duration: a number with a unit (ns, us, ms, s, m, h: "1.5s", "500ms") or without one, in
 * bare_unit_ns nanoseconds (1e9: seconds). 0 with *ns, or -1 for anything else (negative,
 * beyond 2^63 ns).
 */
int parse_duration(const char *s, double bare_unit_ns, uint64_t *ns);

/* --sample N of record and top (an OPT_CALL into a uint32_t): one root closure in N, N from 1
 * (every one: 0) to 1,000,000,000; else args_error's "--sample needs a whole number from 1 to
 * 1000000000: S" and EXIT_USAGE. */
int sample_opt(void *every, const char *s, const char *cmd);

/*
 * --max-memory SIZE of every command that reads a trace or a process (an OPT_CALL): the tool's
 * memory limit (common/mem_limit.h), set at once; SIZE a number of bytes with K, M, G or T, from
 * 16M. Else args_error's "--max-memory needs a size from 16M (512M, 4G)" and EXIT_USAGE.
 */
int args_max_memory(void *unused, const char *arg, const char *cmd);
#define OPTION_MAX_MEMORY                                                                          \
	OPTION(OPT_CALL, 0, "max-memory", NULL, "SIZE",                                            \
	       "end with an error (exit 2) past SIZE of memory\n(default: half the machine's)",    \
	       .call = args_max_memory)

/* --stacks N of record and check (an OPT_INT into a long, recorder_opts.stacks). */
#define OPTION_STACKS(value)                                                                       \
	OPTION(OPT_INT, 0, "stacks", value, "N",                                                   \
	       "take N user-stack frames (1 to 64) at every init\nand get, shown under each "      \
	       "blamed site (the\nper-op probes; build with -fno-omit-frame-pointer)",             \
	       .min = 1, .max = RECORDER_STACKS_MAX)

#endif
