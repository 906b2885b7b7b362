/*
 * The terminal of `closuretrace top`: raw input (keys arrive at once, not echoed) on the
 * alternate screen, and the terminal as it was on every way out: a normal return, exit(), and
 * the signals that end a process (each restores, then takes its default action).
 */
#ifndef CLOSURETRACE_TOP_TERM_H
#define CLOSURETRACE_TOP_TERM_H

#include <stdbool.h>

/* Whether standard input and output are a terminal (term_enter can take them over). */
bool term_available(void);
/* Takes over the terminal on standard input and output. 0, or -1 (not a terminal). */
int term_enter(void);

/* Gives the terminal back as it was; safe to call again, and from a signal handler. */
void term_leave(void);

/* The terminal's size (24 x 80 when unknown). */
void term_size(int *rows, int *cols);

/* A key pressed since the last call, or -1 for none. Never blocks. */
int term_key(void);

#endif
