/* The command-line front of every command (args.h): one table read by getopt_long, one --help. */
#define _GNU_SOURCE
#include "args.h"
#include "mem_limit.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define MAX_OPTS     32
#define HELP_COLUMN  25	 /* where an option's help starts in --help */
#define OPT_LONG_VAL 256 /* getopt_long's value of table entry i: OPT_LONG_VAL + i */

int args_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "closuretrace %s: %s%s%s; see 'closuretrace %s --help'\n", cmd, what,
		arg ? ": " : "", arg ? arg : "", cmd);
	return EXIT_USAGE;
}

int args_unknown_option(const char *cmd, const char *opt)
{
	return args_error(cmd, "unknown option", opt);
}

int args_extra(const char *cmd, const char *arg)
{
	return args_error(cmd, "unexpected argument", arg);
}

int args_parse_only(const struct cmdline *cl, int argc, char **argv)
{
	int next, rc = args_parse(cl, argc, argv, &next);

	if (rc >= 0)
		return rc;
	return next < argc ? args_extra(cl->cmd, argv[next]) : -1;
}

int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/* Appends: a repeated -p adds to the list (as perf's), never replaces it. */
int parse_pid_list(const char *s, struct pid_list *l)
{
	char buf[32];

	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ",");

		if (len >= sizeof(buf) || l->n == PID_LIST_MAX)
			return -1;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (parse_pid(buf, &l->v[l->n++]))
			return -1;
		p += len;
		if (!*p)
			return 0;
	}
}

int sample_opt(void *every, const char *s, const char *cmd)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s >= '0' && *s <= '9' && !*end && v >= 1 && v <= 1000000000ull) {
		*(uint32_t *)every = v == 1 ? 0 : (uint32_t)v;
		return 0;
	}
	return args_error(cmd, "--sample needs a whole number from 1 to 1000000000", s);
}

int args_one_pid(const char *cmd, const struct pid_list *l, pid_t *pid)
{
	if (!l->n)
		return args_error(cmd, "give -p PID", NULL);
	if (l->n > 1)
		return args_error(cmd, "-p takes one process id here, not a list nor -p twice",
				  NULL);
	*pid = l->v[0];
	return 0;
}

int parse_duration(const char *s, double bare_unit_ns, uint64_t *ns)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"ns", 1},	 {"us", 1e3}, {"µs", 1e3},  {"ms", 1e6},
		     {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
	char *end;
	double v = strtod(s, &end), scale = bare_unit_ns;

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end) {
		scale = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].name))
				scale = units[i].ns;
	}
	if (!scale || v * scale > 9.2e18)
		return -1;
	*ns = (uint64_t)(v * scale + 0.5);
	return 0;
}

int args_timeout_seconds(void *seconds, const char *arg, const char *cmd)
{
	uint64_t ns;

	if (parse_duration(arg, 1e9, &ns) || !ns)
		return args_error(cmd, "--timeout needs a positive duration (1.5, 1s, 500ms)", arg);
	*(double *)seconds = (double)ns / 1e9;
	return 0;
}

/* Buffer sizes: a power of two from 4K to 2G, with K, M or G. */
static int parse_size(const char *s, size_t *bytes)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end || v < 4096 || (v & (v - 1)) || v > (1ull << 31))
		return -1;
	*bytes = v;
	return 0;
}

int args_max_memory(void *unused, const char *arg, const char *cmd)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	const char *unit = *end ? strchr(units, *end & ~0x20) : NULL;

	(void)unused;
	if (unit && *unit)
		v = end[1] || v >> (64 - 10 * (unit - units + 1)) ? 0
								  : v << 10 * (unit - units + 1);
	if (end == arg || *arg == '-' || (*end && !(unit && *unit)) || v < (16ull << 20))
		return args_error(cmd, "--max-memory needs a size from 16M (512M, 4G)", arg);
	if (mem_limit_set(v))
		return args_error(cmd, "--max-memory cannot be set here", arg);
	return 0;
}

/* "--name", or "-c" for an option without a long name (into buf). */
static const char *opt_name(const struct opt *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

static int take_duration(const char *cmd, const struct opt *o, const char *arg)
{
	double min = o->min || o->max ? o->min : 1e-6, max = o->min || o->max ? o->max : 1e9;
	char name[64], what[160];
	uint64_t ns;

	if (!parse_duration(arg, 1e9, &ns) && ns >= min * 1e9 && ns <= max * 1e9) {
		*(uint64_t *)o->value = ns;
		return 0;
	}
	if (o->min || o->max)
		snprintf(what, sizeof(what), "%s needs a duration from %gs to %gs (1.5, 1s, 500ms)",
			 opt_name(o, name, sizeof(name)), min, max);
	else
		snprintf(what, sizeof(what), "%s needs a positive duration (1.5, 1s, 500ms)",
			 opt_name(o, name, sizeof(name)));
	return args_error(cmd, what, arg);
}

static int take_int(const char *cmd, const struct opt *o, const char *arg)
{
	char *end, name[64], what[160];
	long v = strtol(arg, &end, 10);

	if (!*end && end != arg && v >= o->min && v <= o->max) {
		*(long *)o->value = v;
		return 0;
	}
	snprintf(what, sizeof(what), "%s needs a number from %.0f to %.0f",
		 opt_name(o, name, sizeof(name)), o->min, o->max);
	return args_error(cmd, what, arg);
}

/* One option's argument (NULL for a flag) into its value: 0, or EXIT_USAGE after saying why. */
static int take(const char *cmd, const struct opt *o, const char *arg)
{
	char name[64], what[128];

	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_DURATION:
		return take_duration(cmd, o, arg);
	case OPT_PIDS:
		return parse_pid_list(arg, o->value) ? args_error(cmd, "not a process id", arg) : 0;
	case OPT_INT:
		return take_int(cmd, o, arg);
	case OPT_SIZE:
		if (!parse_size(arg, o->value))
			return 0;
		snprintf(what, sizeof(what), "%s must be a power of two from 4K to 2G",
			 opt_name(o, name, sizeof(name)));
		return args_error(cmd, what, arg);
	case OPT_CALL:
		return o->call(o->value, arg, cmd);
	case OPT_END:
		break;
	}
	return EXIT_USAGE;
}

/* getopt_long's tables from ours; -h and --help are added. */
static void getopt_tables(const struct cmdline *cl, struct option *longs, char *shorts)
{
	size_t n = 0, s = 0;
	int i = 0;

	if (cl->stop_at_argument)
		shorts[s++] = '+';
	shorts[s++] = ':'; /* a missing argument is ':', not '?' */
	for (const struct opt *o = cl->opts; o->kind != OPT_END && i < MAX_OPTS; o++, i++) {
		bool has_arg = o->kind != OPT_FLAG;

		if (o->short_name) {
			shorts[s++] = o->short_name;
			if (has_arg)
				shorts[s++] = ':';
		}
		if (o->long_name)
			longs[n++] = (struct option){o->long_name,
						     has_arg ? required_argument : no_argument,
						     NULL, OPT_LONG_VAL + i};
	}
	longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
	longs[n] = (struct option){NULL, 0, NULL, 0};
	shorts[s++] = 'h';
	shorts[s] = 0;
}

static const struct opt *find_short(const struct cmdline *cl, int c)
{
	for (const struct opt *o = cl->opts; o->kind != OPT_END; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

int args_parse(const struct cmdline *cl, int argc, char **argv, int *next)
{
	struct option longs[MAX_OPTS + 2];
	char shorts[3 * MAX_OPTS + 4], word[3] = "-?";
	const struct opt *o;
	int c, ret;

	getopt_tables(cl, longs, shorts);
	opterr = 0;
	optind = 0; /* a fresh scan (glibc), should a command parse twice */
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h') {
			args_usage(cl, stdout);
			return EXIT_OK;
		}
		if (c == '?' || c == ':') {
			/* optopt: the short option in a cluster (-vx); 0 for a long one */
			word[1] = (char)optopt;
			return args_error(
				cl->cmd,
				c == ':' ? "an option is missing its argument" : "unknown option",
				optopt && optopt < OPT_LONG_VAL ? word : argv[optind - 1]);
		}
		o = c >= OPT_LONG_VAL ? &cl->opts[c - OPT_LONG_VAL] : find_short(cl, c);
		if (o && (ret = take(cl->cmd, o, optarg)))
			return ret;
	}
	*next = optind;
	return -1;
}

/* One option's lines of --help. */
static void usage_line(const struct opt *o, FILE *out)
{
	char left[128];
	int len;

	len = snprintf(left, sizeof(left), "  %s%c%s%s%s%s%s", o->short_name ? "-" : " ",
		       o->short_name ? o->short_name : ' ',
		       o->short_name && o->long_name ? "," : " ", o->long_name ? " --" : "",
		       o->long_name ? o->long_name : "", o->arg ? " " : "", o->arg ? o->arg : "");
	fputs(left, out);
	if (len >= HELP_COLUMN - 1)
		fprintf(out, "\n%*s", HELP_COLUMN - 1, "");
	else
		fprintf(out, "%*s", HELP_COLUMN - 1 - len, "");
	for (const char *p = o->help; *p;) {
		size_t line = strcspn(p, "\n");

		fprintf(out, " %.*s\n", (int)line, p);
		p += line;
		if (*p == '\n' && *++p)
			fprintf(out, "%*s", HELP_COLUMN - 1, "");
	}
}

void args_usage(const struct cmdline *cl, FILE *out)
{
	fputs(cl->synopsis, out);
	if (cl->more_synopsis)
		cl->more_synopsis(out);
	fputc('\n', out);
	for (const struct opt *o = cl->opts; o->kind != OPT_END; o++)
		usage_line(o, out);
	usage_line(&(struct opt){.short_name = 'h', .long_name = "help", .help = "this help"}, out);
	if (cl->epilogue) {
		fputc('\n', out);
		fputs(cl->epilogue, out);
	}
}
