/* The command line pieces that several commands read alike (args.h). */
#include "args.h"

#include <math.h>
#include <stdlib.h>

#include "commands.h"

int usage_error(const char *cmd, const char *msg, const char *arg)
{
	fprintf(stderr, "closuretrace %s: %s%s%s; see 'closuretrace %s --help'\n", cmd, msg,
		arg ? ": " : "", arg ? arg : "", cmd);
	return EXIT_USAGE;
}

int unknown_option(const char *cmd, const char *opt)
{
	fprintf(stderr, "closuretrace %s: unknown option %s; see 'closuretrace %s --help'\n", cmd,
		opt, cmd);
	return EXIT_USAGE;
}

int help_or_usage(void (*usage)(FILE *out), int c)
{
	usage(c == 'h' ? stdout : stderr);
	return c == 'h' ? EXIT_OK : EXIT_USAGE;
}

int extra_arg(const char *cmd, const char *arg)
{
	fprintf(stderr, "closuretrace %s: unexpected argument '%s'\n", cmd, arg);
	return EXIT_USAGE;
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

int pid_arg(const char *cmd, const char *s, pid_t *pid)
{
	if (!parse_pid(s, pid))
		return 0;
	fprintf(stderr, "closuretrace %s: not a process id: %s\n", cmd, s);
	return EXIT_USAGE;
}

int seconds_arg(const char *cmd, const char *opt, const char *s, uint64_t *ns)
{
	char *end, msg[64];
	double v = strtod(s, &end);

	/* Below a microsecond or beyond ~30 years is a typo, not a limit. */
	if (!*end && end != s && isfinite(v) && v >= 1e-6 && v <= 1e9) {
		*ns = (uint64_t)(v * 1e9);
		return 0;
	}
	snprintf(msg, sizeof(msg), "%s needs a positive number of seconds", opt);
	return usage_error(cmd, msg, s);
}

int sample_arg(const char *cmd, const char *s, uint32_t *every)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s >= '0' && *s <= '9' && !*end && v >= 1 && v <= 1000000000ull) {
		*every = v == 1 ? 0 : (uint32_t)v;
		return 0;
	}
	return usage_error(cmd, "--sample needs a whole number from 1 to 1000000000", s);
}

int buffer_size_arg(const char *cmd, const char *s, size_t *bytes)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end != s) {
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		else if (*end == 'G' || *end == 'g')
			v <<= 30, end++;
		if (!*end && v >= 4096 && !(v & (v - 1)) && v <= (1ull << 31)) {
			*bytes = v;
			return 0;
		}
	}
	return usage_error(cmd, "--buffer-size must be a power of two from 4K to 2G", s);
}
