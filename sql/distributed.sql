-- The cluster form: after schema.sql has made the {local} tables on a server, a Distributed
-- table of the plain name over them on every shard of {cluster} (a cluster of the server's
-- remote_servers). Every row of a trace goes to one shard (sharding key: the trace id), so that
-- FINAL there sees every copy of a row; exports insert synchronously (insert_distributed_sync)
-- so that a row is stored when its export says it was sent.

CREATE TABLE IF NOT EXISTS traces AS traces_local
    ENGINE = Distributed({cluster}, {database}, traces_local, cityHash64(trace_id));
CREATE TABLE IF NOT EXISTS closures AS closures_local
    ENGINE = Distributed({cluster}, {database}, closures_local, cityHash64(trace_id));
CREATE TABLE IF NOT EXISTS diagnostics AS diagnostics_local
    ENGINE = Distributed({cluster}, {database}, diagnostics_local, cityHash64(trace_id));
CREATE TABLE IF NOT EXISTS events AS events_local
    ENGINE = Distributed({cluster}, {database}, events_local, cityHash64(trace_id));
