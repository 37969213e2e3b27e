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

up() {
	local run version t0 t1 c rc=0 line upper
	local -A pids=()
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
	version="$(kafka_version)"
	"$KAFKA_HERE/fetch.sh" "$version" >/dev/null # once, before the parallel starts
	printf '%s\n' "$run" >"$(last_run_file)"
	t0="$(now_ms)"
	for c in source target; do
		"$KAFKA_HERE/start.sh" "$run/$c" >"$run/$c.out" 2>"$run/$c.err" &
		pids[$c]=$!
	done
	for c in source target; do
		if ! wait "${pids[$c]}"; then
			rc=1
			log "the $c cluster failed to start:"
			cat "$run/$c.err" >&2
		fi
	done
	if ((rc)); then
		"$KAFKA_HERE/stop.sh" "$run/source" --kill 2>/dev/null || true
		"$KAFKA_HERE/stop.sh" "$run/target" --kill 2>/dev/null || true
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
				printf 'CATCHUP_IT_%s_SASL_USER=%s\n' "$upper" "$(cat "$run/$c/scram-user")"
				printf 'CATCHUP_IT_%s_SASL_PASSWORD=%s\n' "$upper" "$(cat "$run/$c/scram-password")"
			fi
		done
	} >"$run/env.tmp"
	mv "$run/env.tmp" "$run/env"
	log "source: $(cat "$run/source.out")"
	log "target: $(cat "$run/target.out")"
	log "both up in $(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s; load with: set -a; . $run/env; set +a"
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
	wait
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
