#!/usr/bin/env bash
# Usage: kdc.sh fetch       the KDC's jars into the cache; prints their folder
#        kdc.sh start DIR   start a Kerberos KDC in DIR (new or empty); prints one line:
#                             KDC=127.0.0.1:P REALM=CATCHUP.TEST PID=<pid> DIR=<dir>
#        kdc.sh stop DIR    stop it (not an error when it does not run)
#
# A Kerberos KDC for the GSSAPI tests: Apache Kerby's SimpleKdcServer (what
# Kafka's own MiniKdc is built on, org.apache.kerby:kerb-simplekdc, pinned in
# kdc/pom.xml) from Maven Central into ${CATCHUP_KAFKA_CACHE}/kerby-VERSION/libs,
# run from kdc/Kdc.java (Java's single-file source launch: nothing to build).
# TCP only, on a free 127.0.0.1 port, realm CATCHUP.TEST, database in memory.
# `start` writes into DIR:
#   krb5.conf      the realm's KDC, TCP only (udp_preference_limit = 1)
#   broker.keytab  the brokers' service principal kafka/127.0.0.1 (their advertised host)
#   client.keytab  the client principal catchup
#   password       the password of the client principal catchup-pw
# A KDC that does not answer within CATCHUP_KAFKA_START_TIMEOUT (90 s) is killed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

KERBY_VERSION=2.0.3
REALM=CATCHUP.TEST
HOST=127.0.0.1

usage() {
	print_usage "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

# fetch: the jars, once, as fetch.sh does for the broker.
fetch() {
	maven_fetch "Kerby $KERBY_VERSION" "$(kafka_cache)/kerby-$KERBY_VERSION" "$KAFKA_HERE/kdc/pom.xml" \
		"kerb-simplekdc-$KERBY_VERSION.jar" -Dkerby.version="$KERBY_VERSION"
}

# kdc_pid DIR: the pid of DIR's KDC if it runs, else returns 1.
kdc_pid() {
	local pid
	[[ -f "$1/pid" ]] || return 1
	pid="$(cat "$1/pid")"
	[[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/cmdline" ]] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF "$1" || return 1
	printf '%s\n' "$pid"
}

start() {
	local dir="$1" libs port attempt pid t0 deadline
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	! kdc_pid "$dir" >/dev/null || die "a KDC already runs in $dir"
	libs="$(fetch)"
	t0="$(now_ms)"
	for attempt in 1 2 3; do
		read -r port < <(free_ports 1)
		rm -f "$dir/pid" "$dir/ready" "$dir"/*.keytab "$dir/password"
		# shellcheck disable=SC2016 # $$ and $@ are for the inner shell
		setsid bash -c 'echo $$ >"$0" && exec "$@"' "$dir/pid" \
			"$(java_bin)" -Xmx128m -XX:+UseSerialGC -cp "$libs/*" "$KAFKA_HERE/kdc/Kdc.java" "$dir" "$REALM" "$port" "$HOST" \
			>"$dir/stdout.log" 2>&1 </dev/null &
		deadline=$((t0 + ${CATCHUP_KAFKA_START_TIMEOUT:-90} * 1000))
		pid=""
		while (($(now_ms) < deadline)); do
			[[ -z "$pid" && -s "$dir/pid" ]] && pid="$(cat "$dir/pid")"
			grep -q '^KDC ready' "$dir/stdout.log" 2>/dev/null && break
			if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			sleep 0.1
		done
		grep -q '^KDC ready' "$dir/stdout.log" 2>/dev/null && break
		[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null
		if ! grep -q 'Address already in use' "$dir/stdout.log" || ((attempt == 3)); then
			tail -n 20 "$dir/stdout.log" >&2
			die "the KDC did not start"
		fi
		log "port $port was taken meanwhile (attempt $attempt); picking another"
	done
	# Kerby writes a krb5.conf of its own; this one is the tests'.
	cat >"$dir/krb5.conf" <<EOC
[libdefaults]
  default_realm = $REALM
  udp_preference_limit = 1
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  ticket_lifetime = 24h
  forwardable = true

[realms]
  $REALM = {
    kdc = 127.0.0.1:$port
  }
EOC
	log "Kerby KDC ready on 127.0.0.1:$port in $((($(now_ms) - t0) / 1000)).$(printf '%03d' $((($(now_ms) - t0) % 1000)))s"
	printf 'KDC=127.0.0.1:%s REALM=%s PID=%s DIR=%s\n' "$port" "$REALM" "$(cat "$dir/pid")" "$dir"
}

stop() {
	local dir pid
	[[ -d "$1" ]] || return 0
	dir="$(cd "$1" && pwd)"
	if pid="$(kdc_pid "$dir")"; then
		kill -TERM "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	fi
	rm -f "$dir/pid"
}

case "${1:-}" in
fetch) [[ $# -eq 1 ]] || usage && fetch ;;
start) [[ $# -eq 2 ]] || usage && start "$2" ;;
stop) [[ $# -eq 2 ]] || usage && stop "$2" ;;
-h | --help) usage 0 ;;
*) usage ;;
esac
