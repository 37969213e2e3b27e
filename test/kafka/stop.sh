#!/usr/bin/env bash
# Usage: stop.sh DATADIR [--kill]
#
# Stops the broker started by start.sh in DATADIR: SIGTERM (a clean shutdown),
# then SIGKILL if it is still running after 30 s. --kill sends SIGKILL at once
# (a crash, for crash tests). Returns when the process is gone. Stopping a
# broker that does not run is not an error. The data stay: start.sh --restart.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
	print_usage "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

data="" kill=0
while (($#)); do
	case "$1" in
	--kill) kill=1 ;;
	-h | --help) usage 0 ;;
	-*) usage ;;
	*)
		[[ -z "$data" ]] || usage
		data="$1"
		;;
	esac
	shift
done
[[ -n "$data" ]] || usage
[[ -d "$data" ]] || die "no such directory: $data"
data="$(cd "$data" && pwd)"
grace_s="${CATCHUP_KAFKA_STOP_TIMEOUT:-30}"

if ! pid="$(broker_pid "$data")"; then
	log "no broker running in $data"
	rm -f "$data/pid"
	exit 0
fi

t0="$(now_ms)"
if ((kill)); then
	kill -KILL "$pid" 2>/dev/null || true
else
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((t0 + grace_s * 1000))
	while broker_pid "$data" >/dev/null && (($(now_ms) < deadline)); do
		sleep 0.1
	done
	if broker_pid "$data" >/dev/null; then
		log "pid $pid still running after ${grace_s}s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
fi
while broker_pid "$data" >/dev/null; do
	sleep 0.05
done
rm -f "$data/pid"
t1="$(now_ms)"
how=stopped
((kill)) && how=killed
log "broker $pid $how in $(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s"
