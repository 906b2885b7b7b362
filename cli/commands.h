/* The closuretrace subcommands: each parses its own options and prints its own --help. */
#ifndef CLOSURETRACE_COMMANDS_H
#define CLOSURETRACE_COMMANDS_H

/* Exit statuses: the same for every command (each man page's EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_LEAKS = 1,	      /* check: leaks found */
	EXIT_USAGE = 2,	      /* bad usage or bad input, with a message naming the file and line */
	EXIT_ENVIRONMENT = 3, /* no permission, no such process, no probes: with what to do */
	EXIT_TIMEOUT = 124,   /* check --timeout ended the command (as timeout(1)) */
};

int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_fleet(int argc, char **argv);

#endif
