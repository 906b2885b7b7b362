-- closuretrace's tables in ClickHouse (docs/fleet.md), as `closuretrace export --create-schema`
-- creates them. {local} is empty on one server and "_local" on each shard of a cluster, where
-- distributed.sql puts a Distributed table of the plain name over them.
--
-- The dedupe rule: every table is a ReplacingMergeTree ordered by (trace_id, seq), seq being the
-- row's number within its trace (the same for every export of the same file). A trace exported
-- twice, or again after an export that failed midway, holds each row once after a merge, and
-- every query reads with FINAL so that it counts each row once before that merge ran. trace_id is
-- a hash of the trace file's bytes. The traces row is sent last: a trace without one was not
-- exported completely.

CREATE TABLE IF NOT EXISTS traces{local} (
    trace_id String,
    exported_at DateTime,
    host String,
    run_id String,
    label_keys Array(String),
    label_values Array(String),
    program String,
    build_id String,
    modules Array(String),
    module_build_ids Array(String),
    pid Int64,
    start DateTime,
    start_unix_ns UInt64,
    duration_ns UInt64,
    events UInt64,
    lost UInt64,
    reason String,
    complete UInt8,
    closures UInt64,
    finished UInt64,
    leaked UInt64,
    hang_roots UInt64,
    kept_alive UInt64,
    stuck UInt64,
    in_flight UInt64,
    suspects UInt64,
    set_aside UInt64
) ENGINE = ReplacingMergeTree(exported_at) ORDER BY trace_id;

CREATE TABLE IF NOT EXISTS closures{local} (
    trace_id String,
    seq UInt64,
    host String,
    program String,
    build_id String,
    start_unix_ns UInt64,
    pid Int64,
    closure String,
    kind String,
    init_site String,
    source_root String,
    continuation String,
    parent String,
    start_ns Int64,
    lifetime_ns UInt64,
    finished UInt8,
    verdict String,
    stuck UInt8,
    blame_site String,
    blame String,
    sure String
) ENGINE = ReplacingMergeTree ORDER BY (trace_id, seq);

CREATE TABLE IF NOT EXISTS diagnostics{local} (
    trace_id String,
    seq UInt64,
    host String,
    program String,
    build_id String,
    start_unix_ns UInt64,
    rule String,
    site String,
    source_root String,
    function String,
    init_site String,
    closure String,
    message String,
    closures UInt64
) ENGINE = ReplacingMergeTree ORDER BY (trace_id, seq);

CREATE TABLE IF NOT EXISTS events{local} (
    trace_id String,
    seq UInt64,
    ts Int64,
    pid Int64,
    tid Int64,
    op String,
    closure String,
    remaining Int64,
    flags String,
    site String
) ENGINE = ReplacingMergeTree ORDER BY (trace_id, seq);
