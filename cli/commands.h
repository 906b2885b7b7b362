/* The closuretrace subcommands: each parses its own options and prints its own --help. */
#ifndef CLOSURETRACE_COMMANDS_H
#define CLOSURETRACE_COMMANDS_H

#include "exit_status.h"

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
