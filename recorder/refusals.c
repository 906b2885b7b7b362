/* What record, check, list, ps and the recorder say when the environment refuses (recorder.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "exit_status.h"
#include "recorder.h"
#include "trace_text.h"

int permission_error(void)
{
	fprintf(stderr, "closuretrace: not permitted to use BPF and uprobes; run as root, or give "
			"closuretrace CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)\n");
	return EXIT_ENVIRONMENT;
}

int no_process_error(pid_t pid)
{
	fprintf(stderr, "closuretrace: no process with pid %d; check the pid (ps -p %d)\n",
		(int)pid, (int)pid);
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

int no_probes_in_process(pid_t pid)
{
	char path[64], comm[64] = "", shown[256], what[320];
	FILE *f;

	/* Which program it is (a pid alone may turn out to be the shell that started it). The name
	 * is the process's own: shown through text_visible. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	if (comm[0])
		snprintf(what, sizeof(what), "process %d (%s)", (int)pid,
			 text_visible(shown, sizeof(shown), comm));
	else
		snprintf(what, sizeof(what), "process %d", (int)pid);
	return no_probes_error(what);
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
