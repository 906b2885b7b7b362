/*
 * JSON Lines out. Events are formatted by hand with fprintf (4-8x faster than jansson,
 * tech-notes section 4): their fields are integers and fixed names. Every string that comes from
 * outside (paths, function and file names, argv) goes through trace_write_string.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "event.h"
#include "trace_writer.h"

static const char *const event_names[CT_NR_OPS] = {
	[CT_INIT] = "init",
	[CT_GET] = "get",
	[CT_PUT] = "put",
	[CT_SUB] = "sub",
	[CT_CONTINUE_AT] = "continue_at",
	[CT_RUN] = "run",
	[CT_FINISH] = "finish",
	[CT_DESTRUCTOR] = "destructor",
	[CT_WAIT] = "wait",
	[CT_WAKE] = "wake",
	[CT_SYNC_BEGIN] = "sync_begin",
	[CT_SYNC_END] = "sync_end",
	[CT_BUG] = "bug",
};

const char *trace_event_name(unsigned kind)
{
	return kind < CT_NR_OPS ? event_names[kind] : NULL;
}

FILE *trace_open(const char *path)
{
	char *old;
	int fd;
	FILE *f;

	if (!strcmp(path, "-")) {
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		f = fd < 0 ? NULL : fdopen(fd, "w");
	} else {
		if (access(path, F_OK) == 0) {
			if (asprintf(&old, "%s.old", path) < 0)
				return NULL;
			if (rename(path, old)) {
				free(old);
				return NULL;
			}
			free(old);
		}
		f = fopen(path, "we");
	}
	if (f)
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

void trace_write_string(FILE *f, const char *s)
{
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				putc(*p, f);
		}
	}
	putc('"', f);
}

void trace_write_header(FILE *f, pid_t pid, const char *exe, char *const *argv, uint64_t start_ns)
{
	fprintf(f,
		"{\"type\":\"header\",\"format\":\"closuretrace\",\"version\":1,\"pid\":%d,"
		"\"exe\":",
		(int)pid);
	trace_write_string(f, exe ? exe : "");
	if (argv) {
		fputs(",\"cmd\":[", f);
		for (int i = 0; argv[i]; i++) {
			if (i)
				putc(',', f);
			trace_write_string(f, argv[i]);
		}
		putc(']', f);
	}
	fprintf(f, ",\"start_ns\":%" PRIu64 "}\n", start_ns);
}

uint64_t trace_event_ip(const struct ct_event *e)
{
	uint64_t ip = e->nargs > 3 ? e->args[3] : 0;

	return ip ? ip - 1 : e->probe_ip;
}

static void write_flags(FILE *f, uint64_t flags)
{
	char s[5];
	int n = 0;

	if (flags & (1u << 30))
		s[n++] = 'R';
	if (flags & (1u << 28))
		s[n++] = 'W';
	if (flags & (1u << 24))
		s[n++] = 'D';
	if (flags & (1u << 26))
		s[n++] = 'S';
	if (n)
		fprintf(f, ",\"flags\":\"%.*s\"", n, s);
}

static const char *how_name(uint64_t how)
{
	static const char *const names[] = {"continue_at", "return", "destructor", "nobarrier"};

	return how < 4 ? names[how] : "unknown";
}

static const char *bug_name(uint64_t bug)
{
	static const char *const names[] = {"unknown", "underflow", "bad_flags", "second_waitlist",
					    "not_running"};

	return bug < 5 ? names[bug] : "unknown";
}

void trace_write_event(FILE *f, const struct ct_event *e, uint64_t start_ns)
{
	const char *name = trace_event_name(e->kind);
	uint64_t a[CT_MAX_ARGS];

	for (int i = 0; i < CT_MAX_ARGS; i++)
		a[i] = e->args[i];

	if (!name)
		return;
	fprintf(f,
		"{\"type\":\"event\",\"ts\":%" PRId64
		",\"tid\":%u,\"ev\":\"%s\",\"cl\":\"0x%" PRIx64 "\",\"remaining\":%" PRIu64,
		(int64_t)(e->ts - start_ns), e->tid, name, a[0], a[1]);
	write_flags(f, a[2]);
	fprintf(f, ",\"ip\":\"0x%" PRIx64 "\"", trace_event_ip(e));
	switch (e->kind) {
	case CT_INIT:
		fprintf(f, ",\"parent\":\"0x%" PRIx64 "\",\"stack\":%s", a[4],
			a[5] ? "true" : "false");
		break;
	case CT_GET:
		fprintf(f, ",\"not_zero\":%s", a[4] ? "true" : "false");
		break;
	case CT_SUB:
		fprintf(f, ",\"v\":%" PRId64, (int64_t)a[4]);
		break;
	case CT_CONTINUE_AT:
		fprintf(f, ",\"fn\":\"0x%" PRIx64 "\",\"wq\":\"0x%" PRIx64 "\",\"how\":\"%s\"",
			a[4], a[5], how_name(a[6]));
		break;
	case CT_RUN:
		fprintf(f, ",\"fn\":\"0x%" PRIx64 "\",\"wq\":\"0x%" PRIx64 "\"", a[4], a[5]);
		break;
	case CT_FINISH:
		fprintf(f, ",\"parent\":\"0x%" PRIx64 "\"", a[4]);
		break;
	case CT_DESTRUCTOR:
		fprintf(f, ",\"fn\":\"0x%" PRIx64 "\"", a[4]);
		break;
	case CT_WAIT:
	case CT_WAKE:
		fprintf(f, ",\"waitlist\":\"0x%" PRIx64 "\"", a[4]);
		break;
	case CT_SYNC_BEGIN:
		fprintf(f, ",\"timeout_ms\":%" PRId64, (int64_t)a[4]);
		break;
	case CT_SYNC_END:
		fprintf(f, ",\"ret\":%" PRId64, (int64_t)a[4]);
		break;
	case CT_BUG:
		fprintf(f, ",\"bug\":\"%s\"", bug_name(a[4]));
		break;
	}
	fputs("}\n", f);
}

void trace_write_sym(FILE *f, uint64_t addr, const struct sym_info *s)
{
	fprintf(f, "{\"type\":\"sym\",\"addr\":\"0x%" PRIx64 "\"", addr);
	if (s->func) {
		fputs(",\"func\":", f);
		trace_write_string(f, s->func);
	}
	if (s->file) {
		fputs(",\"file\":", f);
		trace_write_string(f, s->file);
		fprintf(f, ",\"line\":%d", s->line);
	}
	if (s->obj) {
		fputs(",\"obj\":", f);
		trace_write_string(f, s->obj);
	}
	fputs("}\n", f);
}

void trace_write_module(FILE *f, const char *path, uint64_t base)
{
	fputs("{\"type\":\"module\",\"path\":", f);
	trace_write_string(f, path);
	fprintf(f, ",\"base\":\"0x%" PRIx64 "\"}\n", base);
}

void trace_write_end(FILE *f, const struct trace_end *end)
{
	fprintf(f,
		"{\"type\":\"end\",\"events\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"duration_ns\":%" PRIu64 ",\"reason\":\"%s\"",
		end->events, end->lost, end->duration_ns, end->reason);
	if (end->exit_code >= 0)
		fprintf(f, ",\"exit_code\":%d", end->exit_code);
	if (end->signal > 0)
		fprintf(f, ",\"signal\":%d", end->signal);
	fputs("}\n", f);
}
