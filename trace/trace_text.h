/*
 * Strings in a trace (docs/trace-format.md, "Strings"): JSON strings that carry any byte string.
 * Valid UTF-8 is written as it is; a byte that is not part of valid UTF-8 is written as the
 * escape \udcXX (XX the byte, 80 to ff: a lone low surrogate, as Python's "surrogateescape"), and
 * read back to the same byte.
 */
#ifndef CLOSURETRACE_TRACE_TEXT_H
#define CLOSURETRACE_TRACE_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence at p (1 for ASCII), or 0 when p[0] starts none. */
size_t trace_utf8_seq(const char *p, const char *end);

/*
 * A JSON string's body from p (just after its opening quote): returns where its closing quote is,
 * or NULL when it is not valid JSON or holds an escape of a surrogate that stands for no byte.
 * *escaped: whether it holds escapes (trace_string_decode then turns them into bytes).
 */
const char *trace_string_scan(const char *p, const char *end, bool *escaped);

/* Decode a body that trace_string_scan accepted, in place; returns its length in bytes. */
size_t trace_string_decode(char *s, size_t len);

/*
 * Text from outside (a traced process's symbol and file names, its paths, a trace, a server's
 * answers) as every message and presentation shows it, so that nothing in it acts on a terminal:
 * each character a terminal obeys or that reorders the text around it (C0, DEL, C1 as
 * U+0080..U+009F, and Unicode's Bidi_Control: U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) is shown as its JSON escape \uXXXX (ESC as \u001b), and each byte that is not
 * part of valid UTF-8 as \udcXX, as the trace writes it ("Strings" above; a lone 0x9b, an 8-bit
 * CSI, as \udc9b). The rest, valid UTF-8, is shown as it is (a backslash too). The result is valid
 * UTF-8 and shown again unchanged; escapes that stand for characters keep their meaning in JSON.
 * One definition: every function below is this one, character by character.
 */
#define TEXT_ESCAPE_MAX 6 /* "\uXXXX" */

/*
 * How the character at p (before end) is shown: returns how many bytes of p it is (1 to 4);
 * *shown is p itself or esc (filled with its escape), *len how many bytes of it to show.
 */
size_t text_visible_char(const char *p, const char *end, char esc[TEXT_ESCAPE_MAX + 1],
			 const char **shown, size_t *len);

/* The visible form of s (NULL: "") into buf of size bytes, cut before a character or an escape
 * that does not fit. Returns buf. */
char *text_visible(char *buf, size_t size, const char *s);

/* The visible form of s, in memory of its own (free it); NULL for NULL or out of memory. */
char *text_visible_dup(const char *s);

/* The same for n bytes at s (NUL bytes too), with the bytes of keep ("\t\n") kept as they are. */
char *text_visible_ndup(const char *s, size_t n, const char *keep);

/*
 * snprintf for text that holds visible names: when the text is cut, a character whose bytes did
 * not all fit is left out whole, so that no piece of one (a lone byte 0x80..0xbf) is printed.
 */
__attribute__((format(printf, 3, 0))) int text_vsnprintf(char *buf, size_t size, const char *fmt,
							 va_list ap);
__attribute__((format(printf, 3, 4))) int text_snprintf(char *buf, size_t size, const char *fmt,
							...);

#endif
