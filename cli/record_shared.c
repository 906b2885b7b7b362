/* What record and check share: see record_shared.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "record_shared.h"

int usage_error(const char *cmd, const char *msg, const char *arg)
{
	fprintf(stderr, "closuretrace %s: %s%s%s; see 'closuretrace %s --help'\n", cmd, msg,
		arg ? ": " : "", arg ? arg : "", cmd);
	return EXIT_USAGE;
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

int parse_seconds(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	/* Below a microsecond or beyond ~30 years is a typo, not a limit. */
	if (*end || end == s || !isfinite(v) || v < 1e-6 || v > 1e9)
		return -1;
	*ns = (uint64_t)(v * 1e9);
	return 0;
}
