-- p50 and p99 lifetime of each kind of closure, per build.
-- The lifetimes of the finished closures of each kind (init site and continuation), per build of
-- each program: how many, the median and the 99th percentile in ns (exact).
SELECT
    program,
    build_id,
    kind,
    count() AS closures,
    quantileExact(0.5)(lifetime_ns) AS p50_ns,
    quantileExact(0.99)(lifetime_ns) AS p99_ns
FROM closures FINAL
WHERE finished = 1
GROUP BY program, build_id, kind
ORDER BY program, build_id, closures DESC, kind
LIMIT 200
