/*
 * check's first step: run the command under the recorder, in follow mode (every process it forks,
 * whatever they exec), into a trace file, leaving its standard input, output and error alone.
 */
#ifndef CLOSURETRACE_CHECK_RUN_H
#define CLOSURETRACE_CHECK_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct check_run {
	int exit_code; /* the command's exit status, -1 when it was killed */
	int signal;    /* the signal that killed it, 0 when none */
	uint64_t events, lost;
	bool probes; /* some process of the command had closure probes */
};

/*
 * Runs argv to its end with a ring buffer of buffer_size bytes, writing the trace to out (which
 * stays open). Without BPF permission, or with no_bpf, through the in-process sink (sink.h).
 * Returns -1 when the command ran (see *r), or an exit status after printing why (3: the
 * environment refused; 2: no such command).
 */
int check_run(char **argv, size_t buffer_size, bool no_bpf, FILE *out, struct check_run *r);

#endif
