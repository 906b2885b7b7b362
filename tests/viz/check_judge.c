/*
 * check's judging (viz/check_diag.c) on a trace file, without root: the diagnostics check prints,
 * for golden tests from fixtures (tests/viz/golden_check).
 *   check_judge TRACE [-s SUPPRESSIONS]... [--sarif]
 * Diagnostics and a summary line on standard output, then with --sarif the SARIF log; exit 1 when
 * one is shown, 0 when none, 2 on bad input (a suppression file's error on standard error).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_diag.h"
#include "check_sarif.h"
#include "viz.h"

/* The SARIF log on standard output, after the diagnostics. */
static int write_sarif(const struct check_diags *d)
{
	struct trace_error err;

	if (check_sarif_write(d, stdout, "test", &err)) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct check_supp supp = {0};
	struct check_verdict v;
	struct trace_error err;
	bool sarif = false;
	size_t shown = 0;
	char end[256];
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: check_judge TRACE [-s SUPPRESSIONS]... [--sarif]\n");
		return 2;
	}
	for (int i = 2; i < argc; i += 2) {
		if (!strcmp(argv[i], "--sarif")) {
			sarif = true;
			i--;
		} else if (i + 1 < argc && check_supp_load(&supp, argv[i + 1], &err)) {
			fprintf(stderr, "%s\n", err.text);
			return 2;
		}
	}
	rc = check_judge(argv[1], &v, &err);
	if (rc) {
		if (rc == -1)
			fprintf(stderr, "%s\n", err.text);
		check_supp_free(&supp);
		return 2;
	}
	check_diags_suppress(&v.diags, &supp);
	for (size_t i = 0; i < v.diags.n; i++)
		shown += !v.diags.v[i].suppressed;
	check_diags_print(&v.diags, stdout);
	printf("%zu shown, %lu closure%s leaked or stuck (%lu suppressed), %lu in flight, %lu set "
	       "aside; %s\n",
	       shown, v.diags.closures, v.diags.closures == 1 ? "" : "s",
	       v.diags.suppressed_closures, v.diags.in_flight, v.diags.late,
	       viz_end_text(&v.info, end, sizeof(end)));
	if (sarif && write_sarif(&v.diags))
		rc = 2;
	check_verdict_free(&v);
	check_supp_free(&supp);
	return rc ? rc : shown ? 1 : 0;
}
