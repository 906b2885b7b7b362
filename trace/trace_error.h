/*
 * An error that a library function (trace/, viz/) returns instead of printing it (as jansson's
 * json_error_t): the command decides what to print and how to exit. Structured: the message, and
 * whether it has a place in a file (then the text starts "FILE[:LINE]: error: ", as compilers say).
 * The text is shown as every name is (trace_text.h: a path or a key it quotes may be anyone's).
 */
#ifndef CLOSURETRACE_TRACE_ERROR_H
#define CLOSURETRACE_TRACE_ERROR_H

#include <stdbool.h>

struct trace_error {
	char text[1024];    /* the whole message, to print as it is */
	bool placed;	    /* text names the file it is about (the command adds no prefix) */
	unsigned long line; /* placed: the line in that file; 0: the file as a whole */
};

/* "FILE:LINE: error: MSG" (line 0: "FILE: error: MSG"), placed. Returns -1. */
__attribute__((format(printf, 4, 5))) int trace_error_at(struct trace_error *err, const char *file,
							 unsigned long line, const char *fmt, ...);

/* "MSG", with no place: the command says whose it is ("closuretrace: MSG"). Returns -1. */
__attribute__((format(printf, 2, 3))) int trace_error_set(struct trace_error *err, const char *fmt,
							  ...);

#endif
