/* check's diagnostics as a SARIF 2.1.0 log, for code-scanning dashboards. */
#ifndef CLOSURETRACE_CHECK_SARIF_H
#define CLOSURETRACE_CHECK_SARIF_H

#include <stdio.h>

#include "check_diag.h"
#include "trace_error.h"

/*
 * Writes d to out (the caller opens and places it: out_file.h, whole or not at all, as every
 * output of the tool) as one SARIF run of tool closuretrace (version): rule closure-leak or
 * closure-stuck, level error, the blamed site as the location and the notes as related locations;
 * suppressed diagnostics are kept with an external suppression. Artifact locations are URI
 * references: percent-encoded, absolute paths as file: URIs. Returns 0, or -1 with err.
 */
int check_sarif_write(const struct check_diags *d, FILE *out, const char *version,
		      struct trace_error *err);

#endif
