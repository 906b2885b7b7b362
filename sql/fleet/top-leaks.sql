-- The call sites blamed for the most leaked closures, across runs and hosts.
SELECT
    site,
    any(function) AS function,
    sum(closures) AS leaked,
    uniqExact(trace_id) AS runs,
    uniqExact(host) AS hosts
FROM diagnostics FINAL
WHERE rule = 'leak'
GROUP BY site
ORDER BY leaked DESC, site
LIMIT 20
