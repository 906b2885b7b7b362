/* A ClickHouse server over HTTP (clickhouse.h). */
#include "clickhouse.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_text.h"
#include "xalloc.h"

/* The first bytes of an error answer kept for the message: ClickHouse's text is one line. */
#define ANSWER_KEPT 512

struct clickhouse {
	CURL *curl;
	char *name, *server, *endpoint, *database; /* server: no database named */
	double timeout_s;
	char error[(CURL_ERROR_SIZE + ANSWER_KEPT) * TEXT_ESCAPE_MAX + 64];
	/* The answer being received. */
	clickhouse_out_fn *out;
	void *out_ctx;
	bool stopped;
	char answer[ANSWER_KEPT];
	size_t answer_len;
};

static bool curl_ready;

/* A copy of the first n bytes of s. */
static char *copy(const char *s, size_t n)
{
	char *c = xcalloc(1, n + 1);

	memcpy(c, s, n);
	return c;
}

struct clickhouse *clickhouse_open(const char *url, double timeout_s, char *err, size_t len)
{
	const char *host, *slash;
	char *at;
	struct clickhouse *ch;
	char *base, *db;

	if (strncmp(url, "http://", 7) || !url[7] || url[7] == '/') {
		snprintf(err, len, "want a ClickHouse URL as http://HOST:PORT/DATABASE, not '%s'",
			 url);
		return NULL;
	}
	host = url + 7;
	slash = strchr(host, '/');
	base = copy(url, slash ? (size_t)(slash - url) : strlen(url));
	db = slash && slash[1] ? copy(slash + 1, strlen(slash + 1)) : copy("default", 7);
	if (strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
	    strlen(db)) {
		snprintf(err, len, "the database of '%s' is not a plain name (letters, digits, _)",
			 url);
		free(base);
		free(db);
		return NULL;
	}
	if (!curl_ready) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		curl_ready = true;
	}
	ch = xcalloc(1, sizeof(*ch));
	ch->curl = curl_easy_init();
	if (!ch->curl) {
		snprintf(err, len, "libcurl could not start");
		free(base);
		free(db);
		free(ch);
		return NULL;
	}
	ch->database = db;
	/* Messages name the server without the user and password of http://USER:PASS@HOST. */
	at = strrchr(base + 7, '@');
	ch->name = xcalloc(1, strlen(base) + strlen(db) + 2);
	sprintf(ch->name, "http://%s/%s", at ? at + 1 : base + 7, db);

	ch->server = xcalloc(1, strlen(base) + 128);
	/* Rows and answers as the fleet expects them: inserts into a Distributed table stored when
	 * acknowledged, numbers in JSON answers as numbers; and a column the tables do not have
	 * left out, so that tables made by an older closuretrace still take its rows
	 * (docs/fleet.md). */
	sprintf(ch->server,
		"%s/?insert_distributed_sync=1&output_format_json_quote_64bit_integers=0"
		"&input_format_skip_unknown_fields=1",
		base);
	ch->endpoint = xcalloc(1, strlen(ch->server) + strlen(db) + 16);
	sprintf(ch->endpoint, "%s&database=%s", ch->server, db);
	free(base);
	ch->timeout_s = timeout_s;
	return ch;
}

void clickhouse_close(struct clickhouse *ch)
{
	if (!ch)
		return;
	curl_easy_cleanup(ch->curl);
	free(ch->name);
	free(ch->endpoint);
	free(ch->server);
	free(ch->database);
	free(ch);
}

const char *clickhouse_name(const struct clickhouse *ch)
{
	return ch->name;
}

const char *clickhouse_database(const struct clickhouse *ch)
{
	return ch->database;
}

const char *clickhouse_error(const struct clickhouse *ch)
{
	return ch->error;
}

static size_t received(char *data, size_t size, size_t n, void *ctx)
{
	struct clickhouse *ch = ctx;
	size_t len = size * n, keep = sizeof(ch->answer) - 1 - ch->answer_len;
	long status = 0;

	if (keep > len)
		keep = len;
	memcpy(ch->answer + ch->answer_len, data, keep);
	ch->answer_len += keep;
	/* An error's text is the message (answer_text), not the answer: out never sees it. */
	curl_easy_getinfo(ch->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200 && ch->out && ch->out(ch->out_ctx, data, len)) {
		ch->stopped = true;
		return 0; /* libcurl stops the transfer */
	}
	return len;
}

/*
 * The server's message, on one line: "Code: 60, e.displayText() = DB::Exception: ...". Whatever a
 * server answers is shown as every name is (trace_text.h): it may quote a name any traced
 * program exported, and it reaches the operator's terminal.
 */
static void answer_text(struct clickhouse *ch, long status)
{
	char *p = ch->answer, *shown;

	ch->answer[ch->answer_len] = 0;
	for (char *q = p; q < p + ch->answer_len; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	while (ch->answer_len && ch->answer[ch->answer_len - 1] == ' ')
		ch->answer[--ch->answer_len] = 0;
	shown = text_visible_ndup(p, ch->answer_len, NULL);
	snprintf(ch->error, sizeof(ch->error), "the server answered HTTP %ld: %s", status,
		 !shown	  ? "(out of memory)"
		 : *shown ? shown
			  : "(no text)");
	free(shown);
}

static int run(struct clickhouse *ch, const char *endpoint, const char *sql, const char *body,
	       size_t len, clickhouse_out_fn *out, void *ctx)
{
	char curl_err[CURL_ERROR_SIZE] = "";
	char *escaped = curl_easy_escape(ch->curl, sql, 0);
	char *url = xcalloc(1, strlen(endpoint) + strlen(escaped) + 16);
	long status = 0;
	CURLcode rc;

	sprintf(url, "%s&query=%s", endpoint, escaped);
	curl_free(escaped);
	ch->out = out;
	ch->out_ctx = ctx;
	ch->stopped = false;
	ch->answer_len = 0;
	ch->error[0] = 0;
	curl_easy_setopt(ch->curl, CURLOPT_URL, url);
	curl_easy_setopt(ch->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	curl_easy_setopt(ch->curl, CURLOPT_WRITEFUNCTION, received);
	curl_easy_setopt(ch->curl, CURLOPT_WRITEDATA, ch);
	curl_easy_setopt(ch->curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(ch->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_TIMEOUT_MS, (long)(ch->timeout_s * 1000));
	curl_easy_setopt(ch->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(ch->timeout_s < 10 ? ch->timeout_s * 1000 : 10000));
	/* No "Expect: 100-continue" round trip before each batch. */
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	curl_easy_setopt(ch->curl, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(ch->curl);
	curl_slist_free_all(headers);
	free(url);
	if (rc == CURLE_WRITE_ERROR && ch->stopped)
		return -1; /* out said why */
	if (rc != CURLE_OK) {
		text_visible(ch->error, sizeof(ch->error),
			     curl_err[0] ? curl_err : curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(ch->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		answer_text(ch, status);
		return -1;
	}
	return 0;
}

int clickhouse_run(struct clickhouse *ch, const char *sql, const char *body, size_t len,
		   clickhouse_out_fn *out, void *ctx)
{
	return run(ch, ch->endpoint, sql, body, len, out, ctx);
}

int clickhouse_create_database(struct clickhouse *ch)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS %s", ch->database);
	return run(ch, ch->server, sql, NULL, 0, NULL, NULL);
}
