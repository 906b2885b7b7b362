/* The terminal of top: see top_term.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "top_term.h"

static struct termios saved;
static volatile sig_atomic_t entered;

/* Alternate screen on, cursor hidden; and back. */
#define SCREEN_ENTER "\033[?1049h\033[?25l"
#define SCREEN_LEAVE "\033[?25h\033[?1049l"

void term_leave(void)
{
	if (!entered)
		return;
	entered = 0;
	/* write and tcsetattr only: async-signal-safe */
	if (write(STDOUT_FILENO, SCREEN_LEAVE, sizeof(SCREEN_LEAVE) - 1) < 0) {
		/* nothing more to do: the terminal is gone */
	}
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
}

/* A signal that ends the process: give the terminal back, then die of it as usual. */
static void on_fatal(int sig)
{
	term_leave();
	signal(sig, SIG_DFL);
	raise(sig);
}

bool term_available(void)
{
	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

int term_enter(void)
{
	static const int fatal[] = {SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS,
				    SIGFPE, SIGILL,  SIGPIPE, SIGUSR1, SIGUSR2};
	struct sigaction sa;
	struct termios raw;

	if (!term_available() || tcgetattr(STDIN_FILENO, &saved))
		return -1;
	raw = saved;
	/* No line editing, no echo, no signals from keys: Ctrl-C arrives as a key (3). */
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	atexit(term_leave);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		return -1;
	entered = 1;
	if (write(STDOUT_FILENO, SCREEN_ENTER, sizeof(SCREEN_ENTER) - 1) < 0) {
		term_leave();
		return -1;
	}
	return 0;
}

void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

int term_key(void)
{
	unsigned char c;

	return read(STDIN_FILENO, &c, 1) == 1 ? c : -1;
}
