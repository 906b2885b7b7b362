/*
 * The command line pieces that several commands read alike: the usage messages (each prints one
 * line and returns EXIT_USAGE) and the option values (a process id, seconds, a ring-buffer size).
 * Each command keeps its own getopt table and its own --help.
 */
#ifndef CLOSURETRACE_ARGS_H
#define CLOSURETRACE_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* "closuretrace CMD: MSG[: ARG]; see 'closuretrace CMD --help'" (record, check). */
int usage_error(const char *cmd, const char *msg, const char *arg);

/* "closuretrace CMD: unknown option OPT; see 'closuretrace CMD --help'" (list, ps, top). */
int unknown_option(const char *cmd, const char *opt);

/* The end of a viewer's getopt switch: -h (c == 'h') prints usage on standard output and returns
 * EXIT_OK; an option getopt refused (it said which) prints it on standard error, EXIT_USAGE. */
int help_or_usage(void (*usage)(FILE *out), int c);

/* An argument left after the options: "closuretrace CMD: unexpected argument 'ARG'", EXIT_USAGE. */
int extra_arg(const char *cmd, const char *arg);

/* A process id, from 1 to 0x3fffffff (the kernel's PID_MAX_LIMIT): 0, or -1 when s is not one. */
int parse_pid(const char *s, pid_t *pid);

/* -p PID of list, ps and top: 0, or EXIT_USAGE after "closuretrace CMD: not a process id: S". */
int pid_arg(const char *cmd, const char *s, pid_t *pid);

/* OPT's number of seconds, finite and above 0 (a limit of 1e-300 or inf is none): 0, or
 * usage_error's "OPT needs a positive number of seconds: S" and EXIT_USAGE. */
int seconds_arg(const char *cmd, const char *opt, const char *s, uint64_t *ns);

/* -b's ring-buffer size, a power of two from 4K to 2G with K, M or G: 0, or usage_error's
 * "--buffer-size must be a power of two from 4K to 2G: S" and EXIT_USAGE. */
int buffer_size_arg(const char *cmd, const char *s, size_t *bytes);

/* --sample N of record and top: one root closure in N, N from 1 (every one) to 1,000,000,000:
 * 0 with *every set (1 is 0: every tree), or usage_error's "--sample needs a whole number from
 * 1 to 1000000000: S" and EXIT_USAGE. */
int sample_arg(const char *cmd, const char *s, uint32_t *every);

#endif
