/* closuretrace timeline: a trace as Chrome trace-event JSON, for Perfetto and chrome://tracing. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "timeline.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: closuretrace timeline [-i TRACE] [-o FILE] [--from T] [--to T]\n"
		"                             [--closure [PID:]ADDR[#N]]\n"
		"\n"
		"Write TRACE (default closuretrace.json) as Chrome trace-event JSON, which\n"
		"ui.perfetto.dev and chrome://tracing open: threads as tracks, each closure's\n"
		"life as a slice on the track of its kind, operations as instant events with\n"
		"their file:line, closure_sync as a slice, and arrows for the hops between\n"
		"threads. Memory stays bounded whatever the size of the trace.\n"
		"\n"
		"  -i, --input TRACE      the trace to read ('-': standard input)\n"
		"  -o, --output FILE      write FILE, whole or not at all (default: standard "
		"output)\n"
		"      --from T, --to T   only what happened between T and T (ns since the start,\n"
		"                         or with a unit: 1.5s, 20ms, 300us)\n"
		"      --closure ID       only that closure, its ancestors and descendants\n"
		"                         (ID: ADDR, ADDR#N or PID:ADDR#N)\n");
}

/*
 * Everything into a temporary file beside FILE, renamed over it only when complete. A FILE that
 * is not a regular file (/dev/null, a pipe) is written in place: renaming over it would replace it.
 */
static FILE *open_output(const char *path, char **tmp)
{
	struct stat st;
	int fd;
	FILE *f;

	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		*tmp = NULL;
		if (!(f = fopen(path, "w")))
			fprintf(stderr, "closuretrace timeline: cannot write %s: %s\n", path,
				strerror(errno));
		return f;
	}
	if (asprintf(tmp, "%s.XXXXXX", path) < 0)
		return NULL;
	fd = mkstemp(*tmp);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "closuretrace timeline: cannot write %s: %s\n", path,
			strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	return f;
}

static int finish_output(FILE *f, const char *path, char *tmp, bool ok)
{
	bool written = !ferror(f) && fflush(f) == 0 && (tmp ? fsync(fileno(f)) == 0 : true);
	int err = errno;

	if (path && !tmp)
		written = fclose(f) == 0 && written;
	if (tmp) {
		written = fclose(f) == 0 && written;
		if (ok && written && rename(tmp, path))
			written = false, err = errno;
		if (!ok || !written)
			unlink(tmp);
		free(tmp);
	}
	if (ok && !written) {
		fprintf(stderr, "closuretrace timeline: cannot write %s: %s\n",
			path ? path : "standard output", strerror(err));
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct timeline_opts *o, const char **output)
{
	static const struct option options[] = {
		{"input", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{"closure", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->path = optarg;
			break;
		case 'o':
			*output = optarg;
			break;
		case 'F':
		case 'T':
			if (timeline_parse_time(optarg, c == 'F' ? &o->from_ns : &o->to_ns)) {
				fprintf(stderr,
					"closuretrace timeline: bad time '%s' (ns, or 1.5s, 20ms, "
					"300us)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			o->select = true;
			o->sel_text = optarg;
			if (timeline_parse_closure(optarg, &o->sel_pid, &o->sel_addr,
						   &o->sel_nth)) {
				fprintf(stderr,
					"closuretrace timeline: bad closure '%s' (ADDR, ADDR#N or "
					"PID:ADDR#N, ADDR in hex with 0x)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "closuretrace timeline: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->from_ns > o->to_ns) {
		fprintf(stderr, "closuretrace timeline: --from is after --to\n");
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o = {
		.path = "closuretrace.json", .from_ns = INT64_MIN, .to_ns = INT64_MAX};
	struct timeline_stats st;
	const char *output = NULL;
	char *tmp = NULL;
	FILE *out = stdout;
	int rc = parse_args(argc, argv, &o, &output);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (output && !(out = open_output(output, &tmp)))
		return EXIT_USAGE;
	rc = render_timeline(&o, out, &st);
	if (finish_output(out, output, tmp, rc == 0))
		return EXIT_USAGE;
	if (rc)
		return rc;
	fprintf(stderr,
		"closuretrace timeline: wrote %" PRIu64 " events (%" PRIu64
		" closure slices, %" PRIu64 " operations, %" PRIu64 " closure_sync slices, %" PRIu64
		" arrows) to %s\n",
		st.events, st.slices, st.instants, st.syncs, st.flows,
		output ? output : "standard output");
	return EXIT_OK;
}
