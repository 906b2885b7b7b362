-- The first build in which each call site leaked.
-- For each program and call site that leaked: the build (the program's GNU build id) of the
-- first run in which it leaked, when that run started, and in how many builds it leaked since.
SELECT
    program,
    site,
    argMin(build_id, start_unix_ns) AS first_build,
    toDateTime(intDiv(min(start_unix_ns), 1000000000)) AS first_seen,
    uniqExact(build_id) AS builds
FROM diagnostics FINAL
WHERE rule = 'leak'
GROUP BY program, site
ORDER BY program, first_seen, site
LIMIT 100
