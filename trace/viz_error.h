/*
 * An error that a viz function returns instead of printing it (as jansson's json_error_t): viz is a
 * library, and the command decides what to print and how to exit.
 */
#ifndef CLOSURETRACE_VIZ_ERROR_H
#define CLOSURETRACE_VIZ_ERROR_H

struct viz_error {
	char text[1024]; /* the whole message: "FILE:LINE: error: ..." when there is a place */
};

#endif
