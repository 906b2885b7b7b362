# Starting and stopping our own clickhouse-server instances for the fleet tests and benchmark
# (sourced). Each instance lives in a folder of its own (config, data, logs), listens on
# 127.0.0.1 only, on free ports, and is killed by ch_stop_all whatever happened.
#
#   ch_ports NAME                        choose its ports: CH_PORT_<NAME> (HTTP), CH_TCP_<NAME>
#   ch_start NAME [REMOTE_SERVERS_XML]   start (ch_ports first unless done), wait until it answers
#   ch_kill NAME                         kill -9 (a server dying mid-export)
#   ch_query PORT SQL                    run SQL over HTTP, print the answer
#   ch_stop_all                          kill every instance started here

CH_DIR=${CH_DIR:-$(mktemp -d /tmp/closuretrace-ch.XXXXXX)}
CH_PIDS=()

# A TCP port nobody listens on (the kernel picks it; tiny race, the start is checked).
ch_free_port()
{
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

ch_write_config()
{
	local dir=$1 http=$2 tcp=$3 inter=$4 remote=$5
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/log"
	cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <interserver_http_port>$inter</interserver_http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
  <remote_servers>$remote</remote_servers>
</yandex>
XML
	cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
XML
}

ch_ports()
{
	printf -v "CH_PORT_$1" '%s' "$(ch_free_port)"
	printf -v "CH_TCP_$1" '%s' "$(ch_free_port)"
	printf -v "CH_INTER_$1" '%s' "$(ch_free_port)"
}

# ch_start NAME [REMOTE_SERVERS_XML]
ch_start()
{
	local name=$1 remote=${2:-} dir=$CH_DIR/$1 pvar=CH_PORT_$1 tvar=CH_TCP_$1 ivar=CH_INTER_$1
	local http tcp inter pid i
	[ -n "${!pvar:-}" ] || ch_ports "$name"
	http=${!pvar} tcp=${!tvar} inter=${!ivar}
	ch_write_config "$dir" "$http" "$tcp" "$inter" "$remote"
	(cd "$dir" && exec /usr/sbin/clickhouse-server --config-file="$dir/config.xml" \
		>"$dir/log/stdout" 2>&1) &
	pid=$!
	CH_PIDS+=("$pid")
	printf -v "CH_PID_$name" '%s' "$pid"
	for ((i = 0; i < 600; i++)); do
		if [ "$(curl -s "http://127.0.0.1:$http/ping" 2>/dev/null)" = "Ok." ]; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "clickhouse-server $name exited at start:" >&2
			tail -20 "$dir/log/server.err.log" "$dir/log/stdout" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "clickhouse-server $name did not answer on 127.0.0.1:$http in 60 s" >&2
	return 1
}

# Restart an instance killed by ch_kill, on the same ports and data.
ch_restart()
{
	local name=$1 dir=$CH_DIR/$1 port_var=CH_PORT_$1 pid i
	(cd "$dir" && exec /usr/sbin/clickhouse-server --config-file="$dir/config.xml" \
		>>"$dir/log/stdout" 2>&1) &
	pid=$!
	CH_PIDS+=("$pid")
	printf -v "CH_PID_$name" '%s' "$pid"
	for ((i = 0; i < 600; i++)); do
		[ "$(curl -s "http://127.0.0.1:${!port_var}/ping" 2>/dev/null)" = "Ok." ] && return 0
		kill -0 "$pid" 2>/dev/null || { tail -20 "$dir/log/server.err.log" >&2; return 1; }
		sleep 0.1
	done
	return 1
}

ch_kill()
{
	local var=CH_PID_$1
	kill -9 "${!var}" 2>/dev/null
	wait "${!var}" 2>/dev/null || true
}

# ch_query PORT SQL: the answer on stdout; non-zero with the server's message on failure.
ch_query()
{
	curl -sS --fail-with-body "http://127.0.0.1:$1/" --data-binary "$2"
}

ch_stop_all()
{
	local pid
	for pid in "${CH_PIDS[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
	for pid in "${CH_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	CH_PIDS=()
	rm -rf "$CH_DIR"
}
