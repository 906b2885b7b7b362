/* check's diagnostics as a SARIF 2.1.0 log, for code-scanning dashboards. */
#ifndef CLOSURETRACE_CHECK_SARIF_H
#define CLOSURETRACE_CHECK_SARIF_H

#include "check_diag.h"
#include "viz_error.h"

/*
 * Writes d to path as one SARIF run of tool closuretrace (version): rule closure-leak or
 * closure-stuck, level error, the blamed site as the location and the notes as related locations;
 * suppressed diagnostics are kept with an external suppression. Artifact locations are URI
 * references: percent-encoded, absolute paths as file: URIs. Returns 0, or -1 with err.
 */
int check_sarif_write(const struct check_diags *d, const char *path, const char *version,
		      struct viz_error *err);

#endif
