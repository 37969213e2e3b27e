#!/usr/bin/env bash
# Usage: it.sh [go test arguments...]
#
# The integration run of `make test`: fetches Apache Kafka (KAFKA_VERSION,
# default 4.4.0) from Maven Central, starts a source and a target cluster
# with SASL_SSL listeners and a replicated target (3 brokers, a dedicated
# controller, RF 3, min.insync.replicas 2; cluster.sh up with
# CATCHUP_KAFKA_REPLICATED=1; =0 leaves it out), every broker serving its
# request counters (CATCHUP_KAFKA_METRICS=1), and runs the Go tests that
# need real brokers with the clusters in the environment (the env file of
# cluster.sh) and CATCHUP_REQUIRE_KAFKA=1, so that they fail instead of
# skipping. Default arguments:
#   -race -count=1 -p 1 -timeout 20m ./internal/e2e/... ./internal/brokers/...
# and then, with the replicated target, the crash harness's replicated
# configuration (CATCHUP_CRASH_REPLICATED_KILLS kills, default 20):
#   -count=1 -timeout 20m -run '^TestCrashReplicated$' ./internal/crashtest/
# Arguments given replace them all (one go test). -p 1 because the fault tests of
# internal/brokers kill and restart the shared brokers: no other package may
# run beside them.
#
# The clusters are always stopped and their folder removed at the end, also
# on failure, Ctrl-C or SIGTERM (CATCHUP_IT_KEEP=1 keeps the folder, with the
# broker logs). When the tests fail, the tails of the broker logs are
# printed. Exit status: that of go test, or 1 when the brokers could not be
# fetched or started (the last line says why).
#
# It also fetches Apache Kerby's jars (kdc.sh), the KDC cluster.sh starts for the
# source's GSSAPI listener, and MirrorMaker 2's jars (bench/fetch-mirror.sh, into BENCH_CACHE,
# default the Kafka jar cache) for internal/brokers' take-over test, and
# exports CATCHUP_IT_MM2_LIBS and CATCHUP_IT_JAVA.
#
# Environment: KAFKA_VERSION (else CATCHUP_KAFKA_VERSION, else 4.4.0), and
# every setting of start.sh and cluster.sh (see README.md).
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

case "${1:-}" in
-h | --help)
	print_usage "${BASH_SOURCE[0]}"
	exit 0
	;;
esac

version="${KAFKA_VERSION:-${CATCHUP_KAFKA_VERSION:-$KAFKA_DEFAULT_VERSION}}"
export CATCHUP_KAFKA_VERSION="$version"
export CATCHUP_KAFKA_SASL_SSL=1
export CATCHUP_KAFKA_METRICS=1 # every broker serves its request counters (internal/brokers counts a copy's requests)
export CATCHUP_KAFKA_REPLICATED="${CATCHUP_KAFKA_REPLICATED:-1}"
repo="$(cd "$KAFKA_HERE/../.." && pwd)"
crash_args=()
if (($#)); then
	go_args=("$@")
else
	go_args=(-race -count=1 -p 1 -timeout 20m ./internal/e2e/... ./internal/brokers/...)
	# The crash harness on the replicated target, alone: -run would
	# otherwise also pick the kfake crash tests, which make test runs already.
	if [[ "$CATCHUP_KAFKA_REPLICATED" == 1 ]]; then
		crash_args=(-count=1 -timeout 20m -run '^TestCrashReplicated$' ./internal/crashtest/)
	fi
fi

T0="$(now_ms)"
phase=checks # checks, fetch, start, tests, passed
run=""
test_pid=""
declare -A took=()

secs() { printf '%d.%01ds' $(($1 / 1000)) $((($1 % 1000) / 100)); }

# timed NAME CMD...: runs CMD and records its wall time under NAME.
timed() {
	local name="$1" t rc=0
	shift
	t="$(now_ms)"
	"$@" || rc=$?
	took[$name]=$(($(now_ms) - t))
	return "$rc"
}

# show_logs: the tails of the brokers' logs, for a failed run.
show_logs() {
	local c
	for c in source target replicated/controller replicated/broker-1 replicated/broker-2 replicated/broker-3; do
		[[ -d "$run/$c" ]] || continue
		printf '\n---- %s broker (Kafka %s): tail of %s/server.log\n' "$c" "$version" "$run/$c"
		tail -n 60 "$run/$c/server.log" 2>/dev/null || echo "(no server.log)"
		if [[ -s "$run/$c/stdout.log" ]]; then
			printf -- '---- %s broker: tail of stdout.log (JVM output)\n' "$c"
			tail -n 15 "$run/$c/stdout.log"
		fi
	done
	printf -- '----\n'
} >&2

cleanup() {
	local rc=$? summary name
	trap - EXIT
	trap '' INT TERM # the teardown must finish; a second Ctrl-C does not stop it
	set +e
	if [[ -n "$test_pid" ]] && kill -0 "$test_pid" 2>/dev/null; then
		log "stopping go test (pid $test_pid)"
		kill -TERM -- "-$test_pid" 2>/dev/null
		wait "$test_pid" 2>/dev/null
	fi
	if [[ -n "$run" && -d "$run" ]]; then
		((rc != 0)) && [[ "$phase" == tests && -z "$interrupted" ]] && show_logs
		if [[ "${CATCHUP_IT_KEEP:-0}" == 1 ]]; then
			timed stop env CATCHUP_KAFKA_RUN="$run" "$KAFKA_HERE/cluster.sh" down
			log "kept $run (CATCHUP_IT_KEEP=1)"
		else
			timed stop env CATCHUP_KAFKA_RUN="$run" "$KAFKA_HERE/cluster.sh" down --rm
		fi
	fi
	summary="Kafka $version:"
	for name in fetch start tests stop; do
		[[ -n "${took[$name]:-}" ]] && summary+=" $name $(secs "${took[$name]}"),"
	done
	summary+=" total $(secs $(($(now_ms) - T0)))"
	if [[ "$phase" == passed ]]; then
		log "$summary: PASS"
	elif [[ -n "$interrupted" ]]; then
		log "$summary: INTERRUPTED by $interrupted during $phase"
	elif [[ "$phase" == tests ]]; then
		log "$summary: FAIL (go test exit status $rc)"
	else
		log "$summary: FAILED at $phase (exit status $rc)${FAIL_REASON:+: $FAIL_REASON}"
	fi
	exit "$rc"
}
trap cleanup EXIT
interrupted=""
trap 'interrupted=SIGINT; exit 130' INT
trap 'interrupted=SIGTERM; exit 143' TERM

fail() {
	FAIL_REASON="$*"
	exit 1
}

# ---------------------------------------------------------------- checks

command -v go >/dev/null || fail "go not found on PATH"
java="$(java_bin 2>/dev/null)" || fail "java not found: Kafka brokers need Java 17+ (set JAVA_HOME or PATH)"
java_version="$("$java" -version 2>&1 | head -n 1)"
[[ "$java_version" =~ \"([0-9]+)[.\"] ]] || fail "cannot tell the Java version from: $java_version"
((BASH_REMATCH[1] >= 17)) || fail "$java is Java ${BASH_REMATCH[1]}: Kafka brokers need Java 17+"
log "Apache Kafka $version (two single-node KRaft clusters, SASL_SSL on; replicated target ${CATCHUP_KAFKA_REPLICATED/1/on}); $java_version; $(go version)"

# ---------------------------------------------------------------- fetch

phase=fetch
timed fetch "$KAFKA_HERE/fetch.sh" "$version" >/dev/null ||
	fail "could not fetch Kafka $version from Maven Central (message above)"
# MirrorMaker 2 (connect-mirror, the bench's version) for the take-over test
# of internal/brokers, into BENCH_CACHE (default: the Kafka jar cache).
CATCHUP_IT_MM2_LIBS="$(BENCH_CACHE="${BENCH_CACHE:-${CATCHUP_KAFKA_CACHE:-$KAFKA_HERE/.cache}}" timed fetch-mm2 "$repo/bench/fetch-mirror.sh")" ||
	fail "could not fetch MirrorMaker 2 (connect-mirror) from Maven Central (message above)"
export CATCHUP_IT_MM2_LIBS CATCHUP_IT_JAVA="$java"
# the Kerberos KDC of the GSSAPI test (Apache Kerby; cluster.sh up starts it)
timed fetch-kdc "$KAFKA_HERE/kdc.sh" fetch >/dev/null ||
	fail "could not fetch Apache Kerby (the KDC) from Maven Central (message above)"

# ---------------------------------------------------------------- start

phase=start
run="$(mktemp -d "${TMPDIR:-/tmp}/catchup-it.XXXXXX")"
export CATCHUP_KAFKA_RUN="$run"
env_file=""
timed start "$KAFKA_HERE/cluster.sh" up >"$run/env-path" ||
	fail "the Kafka $version brokers did not start (the cause and the broker log are above)"
env_file="$(cat "$run/env-path")"
set -a
# shellcheck source=/dev/null
. "$env_file"
set +a
export CATCHUP_REQUIRE_KAFKA=1
reported="$(grep -m 1 -o 'Kafka version: [^ ]*' "$CATCHUP_IT_SOURCE_DATA/server.log" || true)"
log "brokers up in $(secs "${took[start]}"), the source reports \"${reported:-no version}\": source $CATCHUP_IT_SOURCE (SASL_SSL $CATCHUP_IT_SOURCE_SASL_SSL), target $CATCHUP_IT_TARGET (SASL_SSL $CATCHUP_IT_TARGET_SASL_SSL)"
[[ "$reported" == "Kafka version: $version" ]] || fail "the broker reports \"$reported\", not Kafka $version"

# ---------------------------------------------------------------- tests

phase=tests
cd "$repo"
t="$(now_ms)"
# go_test ARGS...: go test in its own process group (job control), so that
# an interrupt stops go test, the test binaries and the scripts they run,
# and nothing else.
go_test() {
	local rc=0
	log "go test $*"
	set -m
	go test "$@" &
	test_pid=$!
	set +m
	wait "$test_pid" || rc=$?
	test_pid=""
	return "$rc"
}
rc=0
go_test "${go_args[@]}" || rc=$?
if ((rc == 0 && ${#crash_args[@]})); then
	go_test "${crash_args[@]}" || rc=$?
fi
took[tests]=$(($(now_ms) - t))
((rc == 0)) || exit "$rc"
phase=passed
