-- The closures stuck longest now, in the latest run of each host.
-- In the latest run of each host, the closures stuck (waiting in
-- closure_sync or on a waitlist when the run ended) or suspect (in flight far longer than the
-- finished closures of their kind), oldest first.
SELECT
    host,
    program,
    closure,
    verdict,
    stuck,
    lifetime_ns AS age_ns,
    kind,
    blame_site
FROM closures FINAL
WHERE (stuck = 1 OR verdict = 'suspect')
    AND trace_id GLOBAL IN (SELECT argMax(trace_id, start_unix_ns) FROM traces FINAL GROUP BY host)
ORDER BY age_ns DESC, host, closure
LIMIT 20
