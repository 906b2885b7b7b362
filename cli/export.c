/* Loading a trace into ClickHouse (export.h). */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clickhouse.h"
#include "commands.h"
#include "xalloc.h"

struct batch {
	char *buf;
	size_t len, cap;
	uint64_t rows;
};

/*
 * The sender: a thread that posts one batch while the rows of the next are written, so that the
 * server's work and ours overlap. One batch in flight at most: memory stays two batches per
 * table's worth. Only the sender touches the connection until it is joined.
 */
struct sender {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct clickhouse *ch;
	struct export_result *res; /* rows and bytes stored, counted under lock */
	enum export_table table;
	struct batch in_flight;
	bool busy, failed, quit;
};

struct loader {
	struct sender s;
	size_t batch_bytes;
	struct batch b[EXPORT_NR];
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	char sql[96];

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->busy && !s->quit)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->busy)
			break;
		pthread_mutex_unlock(&s->lock);
		snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT JSONEachRow",
			 export_table_name(s->table));
		int rc = clickhouse_run(s->ch, sql, s->in_flight.buf, s->in_flight.len, NULL, NULL);
		pthread_mutex_lock(&s->lock);
		if (rc) {
			s->failed = true;
		} else {
			s->res->rows[s->table] += s->in_flight.rows;
			s->res->bytes += s->in_flight.len;
		}
		s->busy = false;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Waits until nothing is in flight: 0, or -1 when a batch failed. Called with the lock held. */
static int idle_locked(struct sender *s)
{
	while (s->busy)
		pthread_cond_wait(&s->cond, &s->lock);
	return s->failed ? -1 : 0;
}

/* Hands table t's batch to the sender (its buffer swapped with the one last sent). */
static int send(struct loader *ld, enum export_table t)
{
	struct sender *s = &ld->s;
	struct batch *b = &ld->b[t], spare;
	int rc;

	if (!b->rows)
		return 0;
	pthread_mutex_lock(&s->lock);
	rc = idle_locked(s);
	if (!rc) {
		spare = s->in_flight;
		s->in_flight = *b;
		s->table = t;
		s->busy = true;
		*b = (struct batch){.buf = spare.buf, .cap = spare.cap};
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Every batch handed over is stored: 0, or -1. */
static int drain(struct loader *ld)
{
	int rc;

	pthread_mutex_lock(&ld->s.lock);
	rc = idle_locked(&ld->s);
	pthread_mutex_unlock(&ld->s.lock);
	return rc;
}

static int add_row(void *ctx, enum export_table t, const char *row, size_t len)
{
	struct loader *ld = ctx;
	struct batch *b = &ld->b[t];

	/* The trace's row says the export is complete: every other row is stored first. */
	if (t == EXPORT_TRACES) {
		for (int i = 0; i < EXPORT_NR; i++)
			if (i != EXPORT_TRACES && send(ld, i))
				return 1;
		if (drain(ld))
			return 1;
	}
	if (b->len + len + 1 > b->cap) {
		b->cap = b->len + len + 1 > 2 * b->cap ? b->len + len + 1 : 2 * b->cap;
		b->buf = xrealloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, row, len);
	b->len += len;
	b->buf[b->len++] = '\n';
	b->rows++;
	if (b->len >= ld->batch_bytes && send(ld, t))
		return 1; /* the server failed: export_rows stops and returns it */
	if (t == EXPORT_TRACES && (send(ld, t) || drain(ld)))
		return 1;
	return 0;
}

/* "events 20000, closures 4000" of what was stored. */
static void rows_text(const struct export_result *res, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int t = 0; t < EXPORT_NR && used < len; t++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s %" PRIu64, t ? ", " : "",
					 export_table_name(t), res->rows[t]);
}

int export_trace_to(const char *cmd, const char *path, const struct export_opts *o,
		    struct export_result *res)
{
	struct loader ld = {.s.res = res};
	struct sender *s = &ld.s;
	struct export_trace *t;
	struct trace_error err;
	char why[256], rows[256];
	int rc;

	memset(res, 0, sizeof(*res));
	ld.batch_bytes = o->batch_bytes ? o->batch_bytes : EXPORT_BATCH_BYTES;
	s->ch = clickhouse_open(o->url, o->timeout_s > 0 ? o->timeout_s : EXPORT_TIMEOUT_S, why,
				sizeof(why));
	if (!s->ch) {
		fprintf(stderr, "%s: %s\n", cmd, why);
		return EXIT_USAGE;
	}
	/* The whole trace is read before anything is sent: a damaged one sends nothing. */
	t = export_prepare(path, &err);
	if (!t) {
		fprintf(stderr, "%s\n%s: nothing was sent to %s\n", err.text, cmd,
			clickhouse_name(s->ch));
		clickhouse_close(s->ch);
		return EXIT_USAGE;
	}
	snprintf(res->trace_id, sizeof(res->trace_id), "%s", export_trace_id(t));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->thread, NULL, sender_main, s)) {
		fprintf(stderr, "%s: cannot start a thread: %s\n", cmd, strerror(errno));
		rc = EXIT_ENVIRONMENT;
		goto out;
	}
	rc = export_rows(t, &o->meta, add_row, &ld, &err);
	/* The batch in flight, if any, ends (stored or failed) before the sender does. */
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	if (rc == -1) { /* the file changed under us */
		fprintf(stderr, "%s\n", err.text);
		rc = EXIT_USAGE;
	} else if (rc) {
		rows_text(res, rows, sizeof(rows));
		fprintf(stderr,
			"%s: %s: %s\n%s: trace %s (%s) is not complete there: rows stored before "
			"the failure: %s; the trace is left as it was: export it again (a row sent "
			"twice counts once)\n",
			cmd, clickhouse_name(s->ch), clickhouse_error(s->ch), cmd, res->trace_id,
			path, rows);
		rc = EXIT_ENVIRONMENT;
	}
out:
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	for (int i = 0; i < EXPORT_NR; i++)
		free(ld.b[i].buf);
	free(s->in_flight.buf);
	export_trace_free(t);
	clickhouse_close(s->ch);
	return rc;
}

int export_label_opt(void *labels, const char *arg, const char *cmd)
{
	struct export_labels *l = labels;
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return args_error(cmd, "--label wants KEY=VALUE", arg);
	if (l->n == EXPORT_MAX_LABELS)
		return args_error(cmd, "at most 32 --label", arg);
	*eq = 0; /* argv's own string, kept for the run */
	l->v[l->n++] = (struct export_label){.key = arg, .value = eq + 1};
	return 0;
}

/* A word of a shell command, as one types it: as is when plain, else in single quotes. */
static void shell_word(const char *w)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
				    "_-+=.,/:@%";

	if (*w && strspn(w, plain) == strlen(w)) {
		fputs(w, stderr);
		return;
	}
	fputc('\'', stderr);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*w, stderr);
	fputc('\'', stderr);
}

/* url as messages show it: the user and password of http://USER:PASS@HOST replaced by instead
 * (into buf), as clickhouse_name leaves them out; url itself when it has none. */
static const char *url_shown(const char *url, const char *instead, char *buf, size_t len)
{
	const char *host = strncmp(url, "http://", 7) ? url : url + 7, *at = NULL;

	for (const char *p = host; *p && *p != '/'; p++)
		if (*p == '@')
			at = p;
	if (!at)
		return url;
	snprintf(buf, len, "%.*s%s%s", (int)(host - url), url, instead, at + 1);
	return buf;
}

/* Where the trace is, and the command that exports it again with the same rows. */
static void say_export_again(const char *path, const struct export_opts *o)
{
	char url[4096];
	const char *to = url_shown(o->url, "USER:PASSWORD@", url, sizeof(url));

	fprintf(stderr,
		"closuretrace: the trace is kept in %s; this exports it again (rows already "
		"stored count once)%s:\n  closuretrace export -i ",
		path,
		to != o->url ? ", with the user and password of --export for USER:PASSWORD" : "");
	shell_word(path);
	fputs(" --to ", stderr);
	shell_word(to);
	for (size_t i = 0; i < o->meta.nlabels; i++) {
		char *kv = xcalloc(1, strlen(o->meta.labels[i].key) +
					      strlen(o->meta.labels[i].value) + 2);

		sprintf(kv, "%s=%s", o->meta.labels[i].key, o->meta.labels[i].value);
		fputs(" --label ", stderr);
		shell_word(kv);
		free(kv);
	}
	if (o->meta.host) {
		fputs(" --host ", stderr);
		shell_word(o->meta.host);
	}
	if (o->meta.run_id) {
		fputs(" --run-id ", stderr);
		shell_word(o->meta.run_id);
	}
	fputc('\n', stderr);
}

int export_after_run(const char *path, const struct export_opts *o)
{
	struct export_result res;
	char url[4096];
	const char *shown = url_shown(o->url, "", url, sizeof(url));

	if (export_trace_to("closuretrace: warning", path, o, &res) == EXIT_OK) {
		fprintf(stderr,
			"closuretrace: exported trace %s to %s: %" PRIu64 " events, %" PRIu64
			" closures, %" PRIu64 " diagnostics\n",
			res.trace_id, shown, res.rows[EXPORT_EVENTS], res.rows[EXPORT_CLOSURES],
			res.rows[EXPORT_DIAGNOSTICS]);
		return 0;
	}
	fprintf(stderr,
		"closuretrace: warning: the export to %s failed; the verdict above stands\n",
		shown);
	say_export_again(path, o);
	return -1;
}

int export_url_opt(void *url, const char *arg, const char *cmd)
{
	char why[256];
	struct clickhouse *ch = clickhouse_open(arg, 1, why, sizeof(why));

	if (!ch)
		return args_error(cmd, why, NULL);
	clickhouse_close(ch);
	*(const char **)url = arg;
	return 0;
}
