/* Exit statuses: the same for every command (each man page's EXIT STATUS), and for the parts that
 * end a command after saying why (the recorder's refusals). */
#ifndef CLOSURETRACE_EXIT_STATUS_H
#define CLOSURETRACE_EXIT_STATUS_H

enum {
	EXIT_OK = 0,
	EXIT_LEAKS = 1,	      /* check: leaks found */
	EXIT_USAGE = 2,	      /* bad usage or bad input, with a message naming the file and line */
	EXIT_ENVIRONMENT = 3, /* no permission, no such process, no probes: with what to do */
	EXIT_TIMEOUT = 124,   /* check --timeout ended the command (as timeout(1)) */
};

#endif
