#!/usr/bin/env bash
# Usage: cluster.sh up          start a source and a target cluster (in parallel)
#        cluster.sh down [--rm] stop both (--rm: and delete the run folder)
#        cluster.sh env         print the path of the env file of the current run
#
# The run folder is $CATCHUP_KAFKA_RUN, or for `up` a new temp folder (remembered
# in the cache folder, so that `down` and `env` find it). `up` writes <run>/env:
#   CATCHUP_IT_SOURCE=127.0.0.1:P        CATCHUP_IT_TARGET=127.0.0.1:P
#   CATCHUP_IT_SOURCE_DATA=<dir>         CATCHUP_IT_TARGET_DATA=<dir>
#   CATCHUP_IT_KAFKA_VERSION=<version>
# and with CATCHUP_KAFKA_SASL_SSL=1 also, for SOURCE and TARGET each:
#   CATCHUP_IT_<C>_SASL_SSL=127.0.0.1:S  CATCHUP_IT_<C>_SASL_SSL_WRONG_HOST=127.0.0.1:W
#   CATCHUP_IT_<C>_CA=<ca.crt>           CATCHUP_IT_<C>_SASL_USER=catchup
#   CATCHUP_IT_<C>_SASL_PASSWORD=<password>
#   CATCHUP_IT_<C>_OAUTH=127.0.0.1:O     SASL_PLAINTEXT, OAUTHBEARER checked by Kafka's
#                                        unsecured-JWT validator (unsigned tokens)
# and a Kerberos KDC (kdc.sh, in <run>/kdc) with a GSSAPI listener on the source
# (CATCHUP_KAFKA_GSSAPI=0 leaves them out):
#   CATCHUP_IT_SOURCE_GSSAPI=127.0.0.1:G SASL_PLAINTEXT, GSSAPI, service principal kafka/127.0.0.1
#   CATCHUP_IT_KDC_DIR=<run>/kdc         krb5.conf, client.keytab (principal catchup),
#                                        password (principal catchup-pw)
#   CATCHUP_IT_KDC_REALM=CATCHUP.TEST
# and with CATCHUP_KAFKA_REPLICATED=1 also a replicated target: a dedicated KRaft
# controller (node 100) and three brokers (nodes 1-3), replication factor 3,
# min.insync.replicas=2, unclean election off, each node in <run>/replicated/<node>:
#   CATCHUP_IT_REPLICATED=127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
#   CATCHUP_IT_REPLICATED_DATA=<run>/replicated   (node folders controller, broker-1..3)
# Its timing settings (the stall tests of internal/brokers depend on them):
#   CATCHUP_KAFKA_REPLICA_LAG_MS     replica.lag.time.max.ms of the brokers (default 6000;
#                                    Kafka's is 30000)
#   CATCHUP_KAFKA_SESSION_TIMEOUT_MS broker.session.timeout.ms of the controller (default
#                                    20000): a SIGSTOPped broker stays registered that long,
#                                    so a stall between the two shrinks the ISR by lag alone
# Load it with:  set -a; . <run>/env; set +a
# `up` prints the env file's path on stdout; the rest goes to stderr. All
# start.sh settings (CATCHUP_KAFKA_VERSION, ...) apply to both clusters.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
	print_usage "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

last_run_file() {
	printf '%s\n' "$(kafka_cache)/last-run"
}

run_dir() {
	if [[ -n "${CATCHUP_KAFKA_RUN:-}" ]]; then
		printf '%s\n' "$CATCHUP_KAFKA_RUN"
	elif [[ -f "$(last_run_file)" ]]; then
		cat "$(last_run_file)"
	else
		die "no run folder: set CATCHUP_KAFKA_RUN or run 'cluster.sh up' first"
	fi
}

# field KEY LINE: the value of KEY=value in a start.sh output line.
field() {
	local kv
	for kv in $2; do
		if [[ "$kv" == "$1="* ]]; then
			printf '%s\n' "${kv#"$1="}"
			return 0
		fi
	done
	return 1
}

# up_replicated DIR: the replicated target in DIR (controller first, then the
# three brokers in parallel); prints the brokers' listeners, comma separated.
up_replicated() {
	local dir="$1" cid cline voters n rc=0 list=""
	local -a bp=()
	cid="$(new_cluster_id)"
	mkdir -p "$dir"
	local common="replica.lag.time.max.ms=${CATCHUP_KAFKA_REPLICA_LAG_MS:-6000}
broker.session.timeout.ms=${CATCHUP_KAFKA_SESSION_TIMEOUT_MS:-20000}"
	cline="$(CATCHUP_KAFKA_SASL_SSL=0 CATCHUP_KAFKA_ROLE=controller CATCHUP_KAFKA_NODE_ID=100 \
		CATCHUP_KAFKA_CLUSTER_ID="$cid" CATCHUP_KAFKA_REPLICAS=3 CATCHUP_KAFKA_EXTRA_CONFIG="$common" \
		"$KAFKA_HERE/start.sh" "$dir/controller")" || return 1
	voters="100@$(field CONTROLLER "$cline")"
	for n in 1 2 3; do
		CATCHUP_KAFKA_SASL_SSL=0 CATCHUP_KAFKA_ROLE=broker CATCHUP_KAFKA_NODE_ID=$n \
			CATCHUP_KAFKA_VOTERS="$voters" CATCHUP_KAFKA_CLUSTER_ID="$cid" CATCHUP_KAFKA_REPLICAS=3 \
			CATCHUP_KAFKA_EXTRA_CONFIG="$common" \
			"$KAFKA_HERE/start.sh" "$dir/broker-$n" >"$dir/broker-$n.out" &
		bp+=($!)
	done
	for n in "${bp[@]}"; do
		wait "$n" || rc=1
	done
	((rc == 0)) || return 1
	for n in 1 2 3; do
		list+="${list:+,}$(field BROKERS "$(cat "$dir/broker-$n.out")")"
	done
	printf '%s\n' "$list"
}

# replicated_nodes DIR: the node folders of the replicated target in DIR.
replicated_nodes() {
	local n
	for n in broker-1 broker-2 broker-3 controller; do
		[[ -d "$1/$n" ]] && printf '%s\n' "$1/$n"
	done
	return 0
}

up() {
	local run version t0 t1 c rc=0 line upper
	local -A pids=()
	local -a clusters=(source target)
	[[ "${CATCHUP_KAFKA_REPLICATED:-0}" == 1 ]] && clusters+=(replicated)
	if [[ -n "${CATCHUP_KAFKA_RUN:-}" ]]; then
		run="$CATCHUP_KAFKA_RUN"
		mkdir -p "$run"
	else
		run="$(mktemp -d "${TMPDIR:-/tmp}/catchup-kafka.XXXXXX")"
	fi
	run="$(cd "$run" && pwd)"
	for c in source target; do
		if broker_pid "$run/$c" >/dev/null 2>&1; then
			die "$run/$c is already running: cluster.sh down first"
		fi
		[[ ! -e "$run/$c/ports" ]] || die "$run/$c holds an old cluster: cluster.sh down --rm first"
	done
	[[ ! -e "$run/replicated" ]] || die "$run/replicated holds an old cluster: cluster.sh down --rm first"
	version="$(kafka_version)"
	"$KAFKA_HERE/fetch.sh" "$version" >/dev/null # once, before the parallel starts
	printf '%s\n' "$run" >"$(last_run_file)"
	t0="$(now_ms)"
	"$KAFKA_HERE/start.sh" "$run/target" >"$run/target.out" 2>"$run/target.err" &
	pids[target]=$!
	if [[ " ${clusters[*]} " == *" replicated "* ]]; then
		up_replicated "$run/replicated" >"$run/replicated.out" 2>"$run/replicated.err" &
		pids[replicated]=$!
	fi
	# The KDC before the source, whose GSSAPI listener needs its keytab;
	# the target and the replicated target start meanwhile.
	local kdc=""
	if [[ "${CATCHUP_KAFKA_SASL_SSL:-0}" == 1 && "${CATCHUP_KAFKA_GSSAPI:-1}" == 1 ]]; then
		if ! "$KAFKA_HERE/kdc.sh" start "$run/kdc" >"$run/kdc.out"; then
			wait || true
			"$KAFKA_HERE/stop.sh" "$run/target" --kill 2>/dev/null || true
			for c in $(replicated_nodes "$run/replicated"); do
				"$KAFKA_HERE/stop.sh" "$c" --kill 2>/dev/null || true
			done
			die "cluster.sh up failed: the KDC did not start"
		fi
		kdc="$run/kdc"
	fi
	CATCHUP_KAFKA_KDC="$kdc" "$KAFKA_HERE/start.sh" "$run/source" >"$run/source.out" 2>"$run/source.err" &
	pids[source]=$!
	for c in "${clusters[@]}"; do
		if ! wait "${pids[$c]}"; then
			rc=1
			log "the $c cluster failed to start:"
			cat "$run/$c.err" >&2
		fi
	done
	if ((rc)); then
		"$KAFKA_HERE/stop.sh" "$run/source" --kill 2>/dev/null || true
		"$KAFKA_HERE/stop.sh" "$run/target" --kill 2>/dev/null || true
		for c in $(replicated_nodes "$run/replicated"); do
			"$KAFKA_HERE/stop.sh" "$c" --kill 2>/dev/null || true
		done
		"$KAFKA_HERE/kdc.sh" stop "$run/kdc" 2>/dev/null || true
		die "cluster.sh up failed"
	fi
	t1="$(now_ms)"
	{
		printf 'CATCHUP_IT_KAFKA_VERSION=%s\n' "$version"
		for c in source target; do
			upper="${c^^}"
			line="$(cat "$run/$c.out")"
			printf 'CATCHUP_IT_%s=%s\n' "$upper" "$(field BROKERS "$line")"
			printf 'CATCHUP_IT_%s_DATA=%s\n' "$upper" "$run/$c"
			if field SASL_SSL "$line" >/dev/null; then
				printf 'CATCHUP_IT_%s_SASL_SSL=%s\n' "$upper" "$(field SASL_SSL "$line")"
				printf 'CATCHUP_IT_%s_SASL_SSL_WRONG_HOST=%s\n' "$upper" "$(field SASL_SSL_WRONG_HOST "$line")"
				printf 'CATCHUP_IT_%s_CA=%s\n' "$upper" "$(field CA "$line")"
				printf 'CATCHUP_IT_%s_OAUTH=%s\n' "$upper" "$(field OAUTH "$line")"
				printf 'CATCHUP_IT_%s_SASL_USER=%s\n' "$upper" "$(cat "$run/$c/scram-user")"
				printf 'CATCHUP_IT_%s_SASL_PASSWORD=%s\n' "$upper" "$(cat "$run/$c/scram-password")"
			fi
			if field GSSAPI "$line" >/dev/null; then
				printf 'CATCHUP_IT_%s_GSSAPI=%s\n' "$upper" "$(field GSSAPI "$line")"
			fi
		done
		if [[ -n "$kdc" ]]; then
			printf 'CATCHUP_IT_KDC_DIR=%s\n' "$kdc"
			printf 'CATCHUP_IT_KDC_REALM=%s\n' "$(field REALM "$(cat "$run/kdc.out")")"
		fi
		if [[ -s "$run/replicated.out" ]]; then
			printf 'CATCHUP_IT_REPLICATED=%s\n' "$(cat "$run/replicated.out")"
			printf 'CATCHUP_IT_REPLICATED_DATA=%s\n' "$run/replicated"
		fi
	} >"$run/env.tmp"
	mv "$run/env.tmp" "$run/env"
	log "source: $(cat "$run/source.out")"
	log "target: $(cat "$run/target.out")"
	[[ -s "$run/replicated.out" ]] && log "replicated target: BROKERS=$(cat "$run/replicated.out")"
	log "all up in $(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s; load with: set -a; . $run/env; set +a"
	printf '%s\n' "$run/env"
}

down() {
	local run c rm=0
	[[ "${1:-}" == "--rm" ]] && rm=1
	run="$(run_dir)"
	[[ -d "$run" ]] || {
		log "no run folder $run"
		rm -f "$(last_run_file)"
		return 0
	}
	for c in source target; do
		if [[ -d "$run/$c" ]]; then
			"$KAFKA_HERE/stop.sh" "$run/$c" &
		fi
	done
	# the brokers before their controller, so that they shut down cleanly
	for c in $(replicated_nodes "$run/replicated"); do
		[[ "$c" == */controller ]] || "$KAFKA_HERE/stop.sh" "$c" &
	done
	wait
	if [[ -d "$run/replicated/controller" ]]; then
		"$KAFKA_HERE/stop.sh" "$run/replicated/controller"
	fi
	"$KAFKA_HERE/kdc.sh" stop "$run/kdc"
	if ((rm)); then
		rm -rf "$run"
		log "removed $run"
		if [[ -f "$(last_run_file)" && "$(cat "$(last_run_file)")" == "$run" ]]; then
			rm -f "$(last_run_file)"
		fi
	fi
}

case "${1:-}" in
up)
	[[ $# -eq 1 ]] || usage
	up
	;;
down)
	[[ $# -eq 1 || ($# -eq 2 && "$2" == "--rm") ]] || usage
	down "${2:-}"
	;;
env)
	[[ $# -eq 1 ]] || usage
	run="$(run_dir)"
	[[ -f "$run/env" ]] || die "no env file in $run"
	printf '%s\n' "$run/env"
	;;
-h | --help) usage 0 ;;
*) usage ;;
esac
