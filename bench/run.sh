#!/usr/bin/env bash
# Usage: bench/run.sh            (what `make bench` runs)
#
# Side-by-side benchmark of catchup on two real Apache Kafka brokers (KRaft,
# started with test/kafka/cluster.sh on free loopback ports): it seeds a
# source backlog with Kafka's own ProducerPerformance, then measures, one
# after the other on the same data, each into a freshly deleted and
# recreated target topic:
#   ceiling    catchup's own engine with one end taken away
#              (bench/cmd/ceiling), at catchup's default settings:
#              fetch-only into a sink, produce-only from the backlog in
#              memory, and fetch+produce, the two at once in one process
#              (the ceiling measured on the cores the brokers share); each
#              bounds the copy, and the report flags a ratio above 1
#   perf       Kafka's ProducerPerformance (into the target) and
#              ConsumerPerformance (from the source) at their best
#              settings, the brokers' own limits, for reference
#   catchup    `catchup run` at its defaults, file store
#   catchup-dynamodb   the same with the DynamoDB store (dynalite on loopback)
#   franzcopy  bench/cmd/franzcopy: the franz-go copier a Go engineer would
#              write instead (assigned partitions, idempotent producer,
#              partition, key, headers and timestamp kept)
#   mm2        MirrorMaker 2, dedicated mode (connect-mirror, bench/pom.xml),
#              producer and consumer at their defaults
#   mm2-tuned  the same with the throughput settings of
#              bench/templates/mm2-tuned.properties (their source is there)
#   mm2-eos    mm2-tuned with exactly.once.source.support=enabled
#              (bench/templates/mm2-eos.properties), the peer's exact mode
#   mm1        MirrorMaker 1 (kafka.tools.MirrorMaker of Kafka 3.9), no-loss settings
#   kcat       kcat -C | kcat -P, the naive baseline
#   profile    the catchup copy again, in bench/cmd/profile with the Go CPU profiler
#   latency    (once) produce to visibility at a steady 1 MB/s, p50/p99:
#              `catchup run --every 1s` and MirrorMaker 2 tuned, running continuously
#   window     (once, not per shape) a 1-record window, 5 times, file store
# for four record shapes, 8 partitions each: 1 KiB values ("1k"), 100-byte
# values ("100b"), 1 KiB values in zstd batches copied to a zstd target
# ("1k-zstd": seeded with compression.type=zstd, every copier told to
# compress with zstd), and 1 KiB values with keys and two headers
# ("1k-keyed": seeded by kafkactl seed), each on two topologies
# (BENCH_TOPOLOGIES): "single", the source broker to a single-broker target,
# and "rf3", the same source to a 3-broker target (a dedicated KRaft
# controller and three brokers, test/kafka/start.sh as cluster.sh starts
# them) with topics of replication factor 3, min.insync.replicas=2, every
# copier at acks=all; an rf3 step's shape is SHAPE-rf3 in the results. Then
# `catchup run` again on a 1 KiB backlog BENCH_SCALES times larger
# (single-broker target; memory must stay flat). Before the measurements of a shape, a
# warm-up (ceiling fetch and produce once, not reported) warms the brokers'
# JIT. MirrorMaker 1 and 2 run until the
# target's end offsets reach the backlog (polled every 100 ms), then stop.
# The results (raw outputs, one folder per step) go to BENCH_OUT, and
# bench/cmd/report turns them into bench/REPORT.md.
#
# Repeats: the ceiling steps, catchup (file store) and every peer (franzcopy,
# the MirrorMakers, kcat) run BENCH_REPEAT times each, interleaved (round 1
# of every step, then round 2, ...), so that a drift in the machine's load
# hits them alike; the report shows the median run of each (by records/s)
# and its range. The perf tools, catchup-dynamodb, profile and window run once.
#
# Baseline: with BENCH_BASELINE=REV (any git revision), catchup and ceiling
# are also built from REV into $BENCH_OUT/bin/baseline/ (from a git archive
# unpacked in the run's temporary folder and removed after the build), and
# right after (in even rounds right before) each fetch-only, produce-only
# and catchup step the same step runs with those binaries, on the same data
# into a fresh target: fetch-only-baseline, produce-only-baseline,
# catchup-baseline. The report labels them with REV's short hash and adds a
# table "this commit / baseline": a change measured side by side in one
# run, e.g.
#   BENCH_BASELINE=main BENCH_TOOLS="ceiling catchup" BENCH_SCALES="" bench/run.sh
#
# Environment (defaults in brackets):
#   BENCH_QUICK=1      a reviewer's run (7.9 min on 2 cores at load 0.3-4.5; 17.6 min at load 11-28):
#                      BENCH_GB=0.05 BENCH_SMALL_GB=0.05 BENCH_SCALES="" BENCH_REPEAT=1,
#                      shapes "1k 100b", tools "ceiling catchup franzcopy mm2
#                      mm2-tuned mm2-eos mm1 kcat latency", 20 s of latency; explicit settings win
#   BENCH_GB           1 KiB backlog, in units of 1e6 records (1.024 GB of values) [1]
#   BENCH_SMALL_GB     100-byte backlog, in units of 1e7 records (1 GB of values) [0.5]
#   BENCH_SCALES       multiples of the 1 KiB backlog for the memory check ["4"; "" skips]
#   BENCH_SHAPES       ["1k 100b 1k-zstd 1k-keyed"]
#   BENCH_TOPOLOGIES   ["single rf3"]; SHAPE=T1+T2 for a shape that differs ("single rf3 100b=single")
#   BENCH_TOOLS        ["ceiling perf catchup catchup-dynamodb franzcopy mm2 mm2-tuned mm2-eos mm1 kcat profile latency window"]
#   BENCH_LATENCY_S    seconds of steady 1 MB/s for the latency steps [60; quick 20]
#   BENCH_PARTITIONS   [8]
#   BENCH_REPEAT       runs of each ceiling step, of catchup (file store) and of each peer [3];
#                      "N SHAPE=M ...": M runs for SHAPE, N for the others (e.g. "1 1k=3")
#   BENCH_BASELINE     git revision to compare with, side by side ["": none]
#   BENCH_OUT          results folder [bench/out/<UTC time>]
#   BENCH_REPORT       the report written at the end ["bench/REPORT.md"; "" skips]
#   BENCH_KAFKA_VERSION / BENCH_MM1_VERSION / BENCH_MM2_VERSION  [4.4.0 / 3.9.2 / 4.3.1]
#   BENCH_BROKER_HEAP  broker heap ["-Xms1g -Xmx1g"]
#   BENCH_TIMEOUT      seconds one measurement may take [3600]
#   BENCH_KEEP=1       keep the brokers' data folder
#
# Needs: Go, Java 17+, Maven, python3 (test/kafka), /usr/bin/time (each
# installed with apt-get when missing and run as root), node and
# npm-installed dynalite (catchup-dynamodb; npm ci when missing, else its
# row is left out with a notice), kcat (apt-get, else its row is left out
# with a notice). The Kafka, MirrorMaker 1 (Kafka 3.9) and MirrorMaker 2
# jars come from Maven Central through mvn, once, into CATCHUP_KAFKA_CACHE.
# Everything it starts is stopped on exit, also on failure or Ctrl-C. A step
# that fails is recorded as failed and the run goes on; the exit status is 1
# if any step failed.

# shellcheck source-path=SCRIPTDIR
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
# shellcheck source=../test/kafka/lib.sh
. "$REPO/test/kafka/lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

case "${1:-}" in
-h | --help)
	print_usage "${BASH_SOURCE[0]}"
	exit 0
	;;
"") ;;
*)
	print_usage "${BASH_SOURCE[0]}" >&2
	exit 2
	;;
esac

BENCH_QUICK="${BENCH_QUICK:-0}"
if [[ "$BENCH_QUICK" == 1 ]]; then
	BENCH_GB="${BENCH_GB:-0.05}"
	BENCH_SMALL_GB="${BENCH_SMALL_GB:-0.05}"
	BENCH_SCALES="${BENCH_SCALES-}"
	BENCH_REPEAT="${BENCH_REPEAT:-1}"
	BENCH_SHAPES="${BENCH_SHAPES:-1k 100b}"
	BENCH_TOOLS="${BENCH_TOOLS:-ceiling catchup franzcopy mm2 mm2-tuned mm2-eos mm1 kcat latency}"
	BENCH_LATENCY_S="${BENCH_LATENCY_S:-20}"
fi
BENCH_GB="${BENCH_GB:-1}"
BENCH_SMALL_GB="${BENCH_SMALL_GB:-0.5}"
BENCH_SCALES="${BENCH_SCALES-4}"
BENCH_SHAPES="${BENCH_SHAPES:-1k 100b 1k-zstd 1k-keyed}"
BENCH_TOPOLOGIES="${BENCH_TOPOLOGIES:-single rf3}"
BENCH_TOOLS="${BENCH_TOOLS:-ceiling perf catchup catchup-dynamodb franzcopy mm2 mm2-tuned mm2-eos mm1 kcat profile latency window}"
BENCH_PARTITIONS="${BENCH_PARTITIONS:-8}"
BENCH_REPEAT="${BENCH_REPEAT:-3}"
BENCH_BASELINE="${BENCH_BASELINE:-}"
BENCH_OUT="${BENCH_OUT:-$HERE/out/$(date -u +%Y%m%dT%H%M%SZ)}"
BENCH_REPORT="${BENCH_REPORT-$REPO/bench/REPORT.md}"
BENCH_KAFKA_VERSION="${BENCH_KAFKA_VERSION:-4.4.0}"
BENCH_MM1_VERSION="${BENCH_MM1_VERSION:-3.9.2}"
BENCH_MM2_VERSION="${BENCH_MM2_VERSION:-4.3.1}"
BENCH_BROKER_HEAP="${BENCH_BROKER_HEAP:--Xms1g -Xmx1g}"
BENCH_TIMEOUT="${BENCH_TIMEOUT:-3600}"
BENCH_LATENCY_S="${BENCH_LATENCY_S:-60}"

# The JVM options of Kafka's bin/kafka-run-class.sh, and the heaps its
# wrapper scripts set, so that the Java tools run as users run them.
JVM_PERF=(-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
	-XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true)
HEAP_PERF=(-Xmx512M)        # kafka-producer-perf-test.sh, kafka-consumer-perf-test.sh
HEAP_MM2=(-Xms256M -Xmx2G)  # connect-mirror-maker.sh
HEAP_MM1=(-Xmx256M)         # kafka-mirror-maker.sh (kafka-run-class.sh's default)

has_tool() { [[ " $BENCH_TOOLS " == *" $1 "* ]]; }
# topologies_of SHAPE: the topologies SHAPE runs on (BENCH_TOPOLOGIES: a
# list, and SHAPE=T1+T2 for a shape that differs, e.g. "single rf3 100b=single").
topologies_of() {
	local w all="" own=""
	for w in $BENCH_TOPOLOGIES; do
		case "$w" in
		"$1"=*) own="${w#*=}" ;;
		*=*) ;;
		*) all+="${all:+ }$w" ;;
		esac
	done
	if [[ -n "$own" ]]; then all="${own//+/ }"; fi
	printf '%s\n' "$all"
}
has_topology() { [[ " ${BENCH_TOPOLOGIES//[=+]/ } " == *" $1 "* ]]; }

# repeat_of SHAPE: the runs of SHAPE's repeated steps (BENCH_REPEAT: N, or
# N followed by SHAPE=N pairs for the shapes that differ).
repeat_of() {
	local w n=""
	for w in $BENCH_REPEAT; do
		case "$w" in
		"$1"=*) n="${w#*=}" ;;
		*=*) ;;
		*) n="${n:-$w}" ;;
		esac
	done
	printf '%s\n' "${n:-1}"
}
for w in $BENCH_REPEAT; do
	[[ "${w#*=}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT=$BENCH_REPEAT: want a whole number of runs, 1 or more (or SHAPE=N)"
done
# BASE: the baseline's short hash, resolved before anything starts so that a
# mistyped revision fails in a second, not after the brokers and the seeding.
BASE=""
if [[ -n "$BENCH_BASELINE" ]]; then
	base_full="$(git -C "$REPO" rev-parse --verify --quiet "$BENCH_BASELINE^{commit}")" ||
		die "BENCH_BASELINE=$BENCH_BASELINE: no such commit in $REPO"
	BASE="$(git -C "$REPO" rev-parse --short "$base_full")"
fi

mkdir -p "$BENCH_OUT"
OUT="$(cd "$BENCH_OUT" && pwd)"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/catchup-bench.XXXXXX")"
BIN="$OUT/bin"
META="$OUT/meta.env"
: >"$RUN/pids"
: >"$META"
mkdir -p "$OUT/steps" "$BIN"
STEP_N=0
ROUND=1 # which run of a repeated step (BENCH_REPEAT); 1 for the others
FAILED=()
BROKERS_UP=0
STEP_PID=""
DYN_PID=""
T0="$(now_ms)"

cleanup() {
	local rc=$?
	trap - EXIT
	trap '' INT TERM
	set +e
	if [[ -n "$STEP_PID" ]] && kill -0 "$STEP_PID" 2>/dev/null; then
		kill -TERM "$STEP_PID" 2>/dev/null
		wait "$STEP_PID" 2>/dev/null
	fi
	reap
	if [[ -n "$DYN_PID" ]]; then
		exec {DYN_FD}>&- # dynalite exits when its stdin closes
		stop_group "$DYN_PID"
	fi
	if ((BROKERS_UP)); then
		local d
		for d in "$RUN/kafka/source" "$RUN/kafka/target" "$RUN/kafka/rf3/broker-"*; do
			[[ -d "$d" ]] && "$REPO/test/kafka/stop.sh" "$d" &
		done
		wait
		# the brokers before their controller, so that they shut down cleanly
		[[ -d "$RUN/kafka/rf3/controller" ]] && "$REPO/test/kafka/stop.sh" "$RUN/kafka/rf3/controller"
	fi
	if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
		log "kept $RUN (BENCH_KEEP=1)"
	else
		rm -rf "$RUN"
	fi
	log "total $((($(now_ms) - T0) / 1000)) s; results in $OUT"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- checks

# apt_install PACKAGE...: installs Debian packages where this script may
# (root with apt-get), so that an unattended run on a fresh machine gets what
# it needs; returns non-zero (the log in $RUN/apt.log) where it may not.
apt_install() {
	[[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null || return 1
	log "installing $* with apt-get"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >>"$RUN/apt.log" 2>&1 ||
		{ log "apt-get install $* failed (see $RUN/apt.log)"; return 1; }
}

# The commands every run needs, each with the Debian package that has it.
for c in go:golang-go mvn:maven python3:python3 /usr/bin/time:time setsid:util-linux; do
	command -v "${c%%:*}" >/dev/null || apt_install "${c#*:}" || true
	command -v "${c%%:*}" >/dev/null || die "${c%%:*} not found (Debian package ${c#*:})"
done
if ! (java_bin) >/dev/null 2>&1 && [[ -z "${JAVA_HOME:-}" ]]; then
	apt_install default-jre-headless || true
fi
JAVA="$(java_bin)"
java_version="$("$JAVA" -version 2>&1 | head -n 1)"
# kcat is a Debian package, not a Go or Maven one: install it where this
# script may, else leave the peer out and say so, so that an unattended run
# on a fresh machine still reaches the end.
drop_tool() { # drop_tool TOOL REASON
	log "NOTICE: $2: the $1 row is left out"
	BENCH_TOOLS="$(tr ' ' '\n' <<<"$BENCH_TOOLS" | grep -vx "$1" | tr '\n' ' ')"
}
if has_tool kcat && ! command -v kcat >/dev/null; then
	apt_install kcat || true
	command -v kcat >/dev/null || drop_tool kcat "kcat is not installed and could not be installed (apt-get install -y kcat to include it)"
fi
# dynalite is an npm package: make deps installs it; bench/run.sh run by
# hand does the same where npm is.
if has_tool catchup-dynamodb && [[ ! -d "$REPO/node_modules/dynalite" ]]; then
	if command -v npm >/dev/null; then
		log "dynalite not installed: npm ci"
		(cd "$REPO" && npm ci --no-audit --no-fund) >"$RUN/npm.log" 2>&1 || log "npm ci failed (see $RUN/npm.log)"
	fi
	[[ -d "$REPO/node_modules/dynalite" ]] || drop_tool catchup-dynamodb "dynalite is not installed (make deps, which needs npm)"
fi

# ---------------------------------------------------------------- machine, versions

put "$META" started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put "$META" cpu_model "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
put "$META" cores "$(nproc)"
put "$META" mem_gib "$(awk '/MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)"
put "$META" kernel "$(uname -sr)"
put "$META" load_start "$(load1)"
put "$META" java "$java_version"
put "$META" go "$(go version)"
put "$META" commit "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || echo '+uncommitted changes')"
put "$META" kafka_version "$BENCH_KAFKA_VERSION"
put "$META" mm1_version "$BENCH_MM1_VERSION"
put "$META" mm2_version "$BENCH_MM2_VERSION"
put "$META" broker_heap "$BENCH_BROKER_HEAP"
put "$META" partitions "$BENCH_PARTITIONS"
put "$META" bench_gb "$BENCH_GB"
put "$META" bench_small_gb "$BENCH_SMALL_GB"
put "$META" bench_scales "$BENCH_SCALES"
put "$META" tools "$BENCH_TOOLS"
put "$META" shapes "$BENCH_SHAPES"
put "$META" topologies "$BENCH_TOPOLOGIES"
put "$META" quick "$BENCH_QUICK"
put "$META" repeat "$BENCH_REPEAT"
if [[ -n "$BASE" ]]; then
	put "$META" baseline "$BASE"
	put "$META" baseline_commit "$base_full"
	put "$META" baseline_subject "$(git -C "$REPO" log -1 --format=%s "$base_full")"
fi
if command -v kcat >/dev/null; then
	put "$META" kcat "$(kcat -V 2>&1 | grep -m1 Version)"
fi
put "$META" jvm_perf "${JVM_PERF[*]}"
put "$META" heap_perf "${HEAP_PERF[*]}"
put "$META" heap_mm2 "${HEAP_MM2[*]}"
put "$META" heap_mm1 "${HEAP_MM1[*]}"
log "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), load $(load1); results in $OUT"

# ---------------------------------------------------------------- build and fetch

t="$(now_ms)"
(cd "$REPO" && go build -trimpath -o "$BIN/catchup" ./cmd/catchup &&
	go build -trimpath -o "$BIN/" ./bench/cmd/ceiling ./bench/cmd/kafkactl ./bench/cmd/profile ./bench/cmd/report ./bench/cmd/franzcopy)
if [[ -n "$BASE" ]]; then
	# git archive, not git worktree add: nothing is registered in the
	# repository that another session works in. The baseline's own ceiling,
	# so that its fetch-only and produce-only measure its adapters.
	mkdir -p "$RUN/baseline-src" "$BIN/baseline"
	git -C "$REPO" archive "$base_full" | tar -x -C "$RUN/baseline-src"
	(cd "$RUN/baseline-src" && go build -trimpath -o "$BIN/baseline/" ./cmd/catchup ./bench/cmd/ceiling) ||
		die "building catchup and bench/cmd/ceiling of the baseline $BASE failed (see above)"
	rm -rf "$RUN/baseline-src"
	log "baseline: $BASE ($(git -C "$REPO" log -1 --format=%s "$base_full")) in $BIN/baseline"
fi
KAFKA_LIBS="$("$REPO/test/kafka/fetch.sh" "$BENCH_KAFKA_VERSION")"
MM1_LIBS="" MM2_LIBS=""
if has_tool mm1; then MM1_LIBS="$("$REPO/test/kafka/fetch.sh" "$BENCH_MM1_VERSION")"; fi
if has_tool mm2 || has_tool mm2-tuned || has_tool mm2-eos || has_tool latency; then MM2_LIBS="$(BENCH_MM2_VERSION="$BENCH_MM2_VERSION" "$HERE/fetch-mirror.sh")"; fi
put "$META" build_fetch_s "$((($(now_ms) - t) / 1000))"

# jcmd HEAP LIBS LOGFILE LEVEL: sets JCMD, a java command line up to the main class.
jcmd() {
	local -a heap
	read -r -a heap <<<"$1"
	JCMD=("$JAVA" "${heap[@]}" "${JVM_PERF[@]}" -Dbench.log="$3" -Dbench.level="$4"
		-Dlog4j2.configurationFile="$HERE/templates/log4j2.xml"
		-Dlog4j.configuration="file:$HERE/templates/log4j.properties" -cp "$2/*")
}

# ---------------------------------------------------------------- brokers

# start.sh directly, not cluster.sh: cluster.sh remembers its run folder in
# the shared jar cache, where another session's plain `cluster.sh down`
# would find and stop these brokers.
t="$(now_ms)"
BROKERS_UP=1
declare -A starting=()
for c in source target; do
	CATCHUP_KAFKA_VERSION="$BENCH_KAFKA_VERSION" CATCHUP_KAFKA_HEAP_OPTS="$BENCH_BROKER_HEAP" \
		CATCHUP_KAFKA_SASL_SSL=0 "$REPO/test/kafka/start.sh" "$RUN/kafka/$c" >"$RUN/$c.start" 2>"$RUN/$c.start.err" &
	starting[$c]=$!
done
# The replicated target as test/kafka/cluster.sh starts it (its up_replicated):
# a dedicated KRaft controller, then three brokers, replication factor 3 and
# min.insync.replicas=2 (CATCHUP_KAFKA_REPLICAS=3), with the Kafka default
# replica lag and session timeouts (cluster.sh shortens them for fault tests).
start_rf3() {
	local dir="$RUN/kafka/rf3" cid cline voters n rc=0
	local -a bp=()
	cid="$(new_cluster_id)"
	mkdir -p "$dir"
	cline="$(CATCHUP_KAFKA_VERSION="$BENCH_KAFKA_VERSION" CATCHUP_KAFKA_SASL_SSL=0 CATCHUP_KAFKA_ROLE=controller \
		CATCHUP_KAFKA_NODE_ID=100 CATCHUP_KAFKA_CLUSTER_ID="$cid" CATCHUP_KAFKA_REPLICAS=3 \
		"$REPO/test/kafka/start.sh" "$dir/controller")" || return 1
	voters="100@$(tr ' ' '\n' <<<"$cline" | sed -n 's/^CONTROLLER=//p')"
	for n in 1 2 3; do
		CATCHUP_KAFKA_VERSION="$BENCH_KAFKA_VERSION" CATCHUP_KAFKA_HEAP_OPTS="$BENCH_BROKER_HEAP" CATCHUP_KAFKA_SASL_SSL=0 \
			CATCHUP_KAFKA_ROLE=broker CATCHUP_KAFKA_NODE_ID=$n CATCHUP_KAFKA_VOTERS="$voters" \
			CATCHUP_KAFKA_CLUSTER_ID="$cid" CATCHUP_KAFKA_REPLICAS=3 \
			"$REPO/test/kafka/start.sh" "$dir/broker-$n" >"$dir/broker-$n.start" &
		bp+=($!)
	done
	for n in "${bp[@]}"; do
		wait "$n" || rc=1
	done
	return "$rc"
}
if has_topology rf3; then
	start_rf3 >"$RUN/rf3.start" 2>"$RUN/rf3.start.err" &
	starting[rf3]=$!
fi
for c in "${!starting[@]}"; do
	wait "${starting[$c]}" || {
		cat "$RUN/"*.start.err "$RUN/kafka/rf3/"*/server.log 2>/dev/null | tail -n 50 >&2
		die "the brokers did not start"
	}
done
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
SRC="$(field "$RUN/source.start" BROKERS)" DST1="$(field "$RUN/target.start" BROKERS)"
SRC_PID="$(field "$RUN/source.start" PID)" DST1_PID="$(field "$RUN/target.start" PID)"
DST3="" DST3_PIDS=""
if has_topology rf3; then
	for n in 1 2 3; do
		DST3+="${DST3:+,}$(field "$RUN/kafka/rf3/broker-$n.start" BROKERS)"
		DST3_PIDS+="$(field "$RUN/kafka/rf3/broker-$n.start" PID) "
	done
	DST3_PIDS+="$(cat "$RUN/kafka/rf3/controller/pid")"
fi
DST="$DST1" DST_PIDS="$DST1_PID" RF=1
put "$META" brokers_up_s "$((($(now_ms) - t) / 1000))"
put "$META" src "$SRC"
put "$META" dst "$DST1"
put "$META" dst_rf3 "$DST3"
put "$META" run "$RUN"
put "$META" out "$OUT"
put "$META" bin "$BIN"
put "$META" repo "$REPO"
put "$META" kafka_libs "$KAFKA_LIBS"
put "$META" mm1_libs "$MM1_LIBS"
put "$META" mm2_libs "$MM2_LIBS"
log "brokers: source $SRC (pid $SRC_PID), target $DST1 (pid $DST1_PID), rf3 target ${DST3:-(not started)} (pids $DST3_PIDS), Kafka $BENCH_KAFKA_VERSION, heap $BENCH_BROKER_HEAP"

# ---------------------------------------------------------------- dynalite

if has_tool catchup-dynamodb; then
	mkfifo "$RUN/dynalite.in"
	exec {DYN_FD}<>"$RUN/dynalite.in" # held open here: dynalite stops when it closes
	setsid node "$REPO/test/dynamodb/dynalite.js" <"$RUN/dynalite.in" >"$RUN/dynalite.out" 2>"$RUN/dynalite.err" &
	DYN_PID=$!
	for _ in $(seq 100); do
		grep -q '^DYNAMODB_ENDPOINT=' "$RUN/dynalite.out" 2>/dev/null && break
		kill -0 "$DYN_PID" 2>/dev/null || die "dynalite exited: $(cat "$RUN/dynalite.err")"
		sleep 0.1
	done
	AWS_ENDPOINT_URL_DYNAMODB="$(sed -n 's/^DYNAMODB_ENDPOINT=//p' "$RUN/dynalite.out")"
	[[ -n "$AWS_ENDPOINT_URL_DYNAMODB" ]] || die "dynalite did not start: $(cat "$RUN/dynalite.err")"
	# dynalite accepts any credentials; these are placeholders for the SDK.
	export AWS_ENDPOINT_URL_DYNAMODB AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_SESSION_TOKEN=
	log "dynalite on $AWS_ENDPOINT_URL_DYNAMODB (pid $DYN_PID)"
fi

# ---------------------------------------------------------------- steps

# run_step SHAPE TOOL FUNCTION ARGS...: runs FUNCTION in a subshell (errexit
# on) with STEP, a fresh folder for its files, and records the machine load
# and the brokers' CPU around it. A failure is recorded, not fatal.
run_step() {
	local shape="$1" tool="$2" rc=0 t
	shift 2
	STEP_N=$((STEP_N + 1))
	STEP="$OUT/steps/$(printf '%02d' "$STEP_N")-$shape-$tool"
	mkdir -p "$STEP"
	put "$STEP/step.env" shape "$shape"
	put "$STEP/step.env" tool "$tool"
	put "$STEP/step.env" round "$ROUND"
	put "$STEP/step.env" value_bytes "$VALUE"
	put "$STEP/step.env" load_before "$(load1)"
	put "$STEP/step.env" src_cpu_before "$(proc_cpu "$SRC_PID")"
	put "$STEP/step.env" topology "$TOPO"
	put "$STEP/step.env" dst_cpu_before "$(procs_cpu "$DST_PIDS")"
	log "---- $shape $tool, round $ROUND (load $(load1))"
	t="$(now_ms)"
	(
		if [[ -n "${DYN_FD:-}" ]]; then exec {DYN_FD}>&-; fi # only this shell keeps dynalite alive
		"$@"
	) &
	STEP_PID=$!
	wait "$STEP_PID" || rc=$?
	STEP_PID=""
	reap
	put "$STEP/step.env" step_s "$((($(now_ms) - t) / 1000))"
	put "$STEP/step.env" src_cpu_after "$(proc_cpu "$SRC_PID")"
	put "$STEP/step.env" dst_cpu_after "$(procs_cpu "$DST_PIDS")"
	put "$STEP/step.env" load_after "$(load1)"
	put "$STEP/step.env" status "$([[ $rc == 0 ]] && echo ok || echo "failed (exit status $rc)")"
	if ((rc != 0)); then
		FAILED+=("$shape $tool")
		log "FAILED: $shape $tool (exit status $rc); its files are in $STEP"
	else
		log "done: $shape $tool in $((($(now_ms) - t) / 1000)) s"
	fi
}

TIME_FMT='%e %U %S %M' # wall s, user s, sys s, max RSS KiB

# timed NAME CMD...: run CMD under /usr/bin/time (into $STEP/NAME.time),
# stdout to $STEP/NAME.out, stderr to $STEP/NAME.err, at most BENCH_TIMEOUT.
timed() {
	local name="$1"
	shift
	cmdline "$STEP/cmd.txt" "$@"
	launch "$STEP/$name.out" "$STEP/$name.err" /usr/bin/time -f "$TIME_FMT" -o "$STEP/$name.time" "$@"
	await "$LAUNCHED" "$BENCH_TIMEOUT"
}

# fresh_target: delete and recreate the target topic.
fresh_target() {
	"$BIN/kafkactl" recreate -brokers "$DST" -topic "$TOPIC" -partitions "$BENCH_PARTITIONS" -rf "$RF"
}

# check_target: the target topic must hold exactly the backlog.
check_target() {
	local n
	n="$("$BIN/kafkactl" count -brokers "$DST" -topic "$TOPIC")"
	put "$STEP/step.env" target_records "$n"
	[[ "$n" == "$RECORDS" ]] || die "the target holds $n records, want $RECORDS"
}

# start_waiter [PID]: poll the target until it holds the backlog, in the
# background (into $STEP/wait.json); with PID, sample that process there.
start_waiter() {
	local -a pid=()
	[[ -n "${1:-}" ]] && pid=(-pid "$1")
	launch "$STEP/wait.json" "$STEP/wait.err" "$BIN/kafkactl" wait -brokers "$DST" -topic "$TOPIC" \
		-want "$RECORDS" -since "$(now_ms)" -timeout "${BENCH_TIMEOUT}s" "${pid[@]}"
	WAITER="$LAUNCHED"
}

catchup_config() { # catchup_config FILE STORE
	render "$HERE/templates/catchup.yaml" "$1" STORE="$2" SRC="$SRC" DST="${DST//,/\", \"}" TOPIC="$TOPIC" COMPRESSION="$COMPRESSION"
}

# seed N: append N records of VALUE bytes to the source topic with ProducerPerformance.
seed() {
	local n="$1" t
	jcmd "${HEAP_PERF[*]}" "$KAFKA_LIBS" "$STEP/java.log" WARN
	put "$STEP/step.env" records "$n"
	t="$(now_ms)"
	if [[ "$KEYED" == 1 ]]; then
		timed seed "$BIN/kafkactl" seed -brokers "$SRC" -topic "$TOPIC" -want "$n" -value "$VALUE"
	else
		timed seed "${JCMD[@]}" org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$SRC" \
			--topic "$TOPIC" --num-records "$n" --record-size "$VALUE" --throughput -1 \
			--command-property acks=all --command-property compression.type="$COMPRESSION"
	fi
	put "$STEP/step.env" seed_s "$((($(now_ms) - t) / 1000))"
}

step_seed() {
	"$BIN/kafkactl" recreate -brokers "$SRC" -topic "$TOPIC" -partitions "$BENCH_PARTITIONS"
	seed "$RECORDS"
	local n
	n="$("$BIN/kafkactl" count -brokers "$SRC" -topic "$TOPIC")"
	[[ "$n" == "$RECORDS" ]] || die "the source holds $n records, want $RECORDS"
}

step_seed_more() { # step_seed_more TOTAL: grow the source topic to TOTAL records
	local have n
	have="$("$BIN/kafkactl" count -brokers "$SRC" -topic "$TOPIC")"
	seed "$(($1 - have))"
	n="$("$BIN/kafkactl" count -brokers "$SRC" -topic "$TOPIC")"
	[[ "$n" == "$1" ]] || die "the source holds $n records, want $1"
}

# The brokers' JIT compiles their fetch and produce paths during the first
# large transfer: whoever goes first would pay for it. The warm-up (not
# reported) reads the whole source backlog and writes it to the target once.
step_warmup() {
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	timed fetch "$BIN/ceiling" -c "$STEP/catchup.yaml" fetch
	timed produce "$BIN/ceiling" -c "$STEP/catchup.yaml" produce
}

# The steps that can run with the baseline's binaries take the folder of
# the binaries last: $BIN or $BIN/baseline.

step_ceiling_fetch() { # step_ceiling_fetch BINDIR
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	put "$STEP/step.env" records "$RECORDS"
	timed ceiling "$1/ceiling" -c "$STEP/catchup.yaml" fetch
}

step_ceiling_produce() { # step_ceiling_produce BINDIR
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	timed ceiling "$1/ceiling" -c "$STEP/catchup.yaml" produce
	check_target
}

# fetch+produce: fetch-only and produce-only at once, one process.
step_ceiling_both() { # step_ceiling_both BINDIR
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	timed ceiling "$1/ceiling" -c "$STEP/catchup.yaml" both
	check_target
}

step_producer_perf() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	jcmd "${HEAP_PERF[*]}" "$KAFKA_LIBS" "$STEP/java.log" WARN
	# Its best settings at catchup's durability (acks=all): large batches
	# given time to fill, buffer room for them, no compression.
	timed perf "${JCMD[@]}" org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$DST" \
		--topic "$TOPIC" --num-records "$RECORDS" --record-size "$VALUE" --throughput -1 \
		--command-property acks=all --command-property batch.size=262144 --command-property compression.type="$COMPRESSION" \
		--command-property linger.ms=10 --command-property buffer.memory=134217728
	check_target
}

step_consumer_perf() {
	put "$STEP/step.env" records "$RECORDS"
	jcmd "${HEAP_PERF[*]}" "$KAFKA_LIBS" "$STEP/java.log" WARN
	timed perf "${JCMD[@]}" org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$SRC" \
		--topic "$TOPIC" --num-records "$RECORDS" --group "bench-perf-$STEP_N" --timeout 60000 \
		--fetch-size 1048576 --command-property max.poll.records=10000 \
		--command-property fetch.max.bytes=52428800
}

step_catchup() { # step_catchup file|dynamodb BINDIR
	local store bin="$2"
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	if [[ "$1" == dynamodb ]]; then
		store="dynamodb://bench-$STEP_N"
		catchup_config "$STEP/catchup.yaml" "$store"
		"$bin/catchup" init-store -c "$STEP/catchup.yaml" >"$STEP/init-store.out" 2>&1
	else
		store="file://$RUN/store-$STEP_N"
		catchup_config "$STEP/catchup.yaml" "$store"
	fi
	put "$STEP/step.env" store "$store"
	start_waiter
	timed catchup "$bin/catchup" run -c "$STEP/catchup.yaml" --json
	await "$WAITER" 60 || true
	check_target
}

step_franzcopy() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	start_waiter
	timed franzcopy "$BIN/franzcopy" -from "$SRC" -to "$DST" -topic "$TOPIC" -compression "$COMPRESSION"
	await "$WAITER" 60 || true
	check_target
}

step_profile() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	timed profile "$BIN/profile" -c "$STEP/catchup.yaml" -cpuprofile "$STEP/cpu.pprof"
	check_target
	go tool pprof -top -nodecount=25 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top.txt" 2>/dev/null
	go tool pprof -top -cum -nodecount=40 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top-cum.txt" 2>/dev/null
	go tool pprof -top -nodecount=100000 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top-all.txt" 2>/dev/null
}

# measure_until_full NAME CMD...: start CMD (a replicator that never stops),
# wait until the target holds the backlog, sampling CMD's CPU and peak RSS at
# that moment, then stop it.
measure_until_full() {
	local name="$1" pid rc=0
	shift
	cmdline "$STEP/cmd.txt" "$@"
	put "$STEP/step.env" started_ms "$(now_ms)"
	launch "$STEP/$name.out" "$STEP/$name.err" "$@"
	pid="$LAUNCHED"
	start_waiter "$pid"
	await "$WAITER" "$((BENCH_TIMEOUT + 10))" || rc=$?
	if ((rc == 0)) && [[ "${COMMITTED:-0}" == 1 ]]; then
		local n deadline=$(($(date +%s) + 300))
		until n="$("$BIN/kafkactl" count -committed -brokers "$DST" -topic "$TOPIC")" && [[ "$n" == "$RECORDS" ]]; do
			(($(date +%s) < deadline)) || die "$name: a read_committed consumer counts ${n:-?} records, want $RECORDS"
			sleep 1
		done
		put "$STEP/step.env" committed_visible_ms "$(now_ms)"
	fi
	stop_group "$pid"
	wait "$pid" 2>/dev/null || true
	((rc == 0)) || die "$name did not fill the target (exit status $rc): $(cat "$STEP/wait.err")"
	if [[ "${COMMITTED:-0}" == 1 ]]; then
		put "$STEP/step.env" target_records "$RECORDS" # counted read_committed above
	else
		check_target
	fi
}

step_mm2() { # step_mm2 [tuned|eos]: MirrorMaker 2 at its defaults, tuned, or tuned with exactly-once
	# aliases of this step only: MirrorMaker 2 keeps its source offsets in
	# mm2-offsets.ALIAS.internal on the target, which a later step would resume from
	local s="src$STEP_N" t="dst$STEP_N" v
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	render "$HERE/templates/mm2.properties" "$STEP/mm2.properties" S="$s" T="$t" SRC="$SRC" DST="$DST" \
		TOPIC="$TOPIC" TASKS="$BENCH_PARTITIONS" RF="$RF" COMPRESSION="$COMPRESSION"
	for v in tuned eos; do
		[[ "${1:-}" == tuned && "$v" == eos ]] && break
		[[ -z "${1:-}" ]] && break
		render "$HERE/templates/mm2-$v.properties" "$STEP/mm2-$v.properties" S="$s" T="$t" COMPRESSION="$COMPRESSION"
		cat "$STEP/mm2-$v.properties" >>"$STEP/mm2.properties"
		rm "$STEP/mm2-$v.properties"
	done
	jcmd "${HEAP_MM2[*]}" "$MM2_LIBS" "$STEP/mm2.log" INFO
	if [[ "${1:-}" == eos ]]; then
		# Transaction markers take offsets: the end offsets reach the backlog
		# a little before the last records do, and those may still be in an
		# open transaction. The time is taken there (in MirrorMaker's
		# favour); then it runs on until a read_committed consumer counts
		# the whole backlog, so that stopping it aborts nothing.
		COMMITTED=1
	fi
	measure_until_full mm2 "${JCMD[@]}" org.apache.kafka.connect.mirror.MirrorMaker "$STEP/mm2.properties"
}

step_mm1() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	render "$HERE/templates/mm1-consumer.properties" "$STEP/consumer.properties" SRC="$SRC" GROUP="bench-mm1-$STEP_N"
	render "$HERE/templates/mm1-producer.properties" "$STEP/producer.properties" DST="$DST" COMPRESSION="$COMPRESSION"
	jcmd "${HEAP_MM1[*]}" "$MM1_LIBS" "$STEP/mm1.log" INFO
	measure_until_full mm1 "${JCMD[@]}" kafka.tools.MirrorMaker \
		--consumer.config "$STEP/consumer.properties" --producer.config "$STEP/producer.properties" \
		--include "$TOPIC" --num.streams "$BENCH_PARTITIONS" --abort.on.send.failure true
}

# kcat: consumer and producer, each under /usr/bin/time, joined by a FIFO.
# Only values cross the pipe, each followed by the byte 0x1e (-D '\x1e'):
# keys, headers, timestamps and the source partition are lost, and a value
# holding that byte would be split in two (ProducerPerformance writes A-Z only).
# With keys (1k-keyed), -K '\x1f' on both ends keeps the key (headers,
# timestamps and partition are still lost); zstd: kcat -P -z zstd.
step_kcat() {
	local c p rc=0
	local -a key=() z=()
	[[ "$KEYED" == 1 ]] && key=(-K '\x1f')
	[[ "$COMPRESSION" != none ]] && z=(-z "$COMPRESSION")
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	mkfifo "$STEP/pipe"
	start_waiter
	printf "kcat -C -b %s -t %s -o beginning -e -q -D '%s' %s | kcat -P -b %s -t %s -D '%s' %s %s\n" \
		"$SRC" "$TOPIC" '\x1e' "${key[*]}" "$DST" "$TOPIC" '\x1e' "${key[*]}" "${z[*]}" >>"$STEP/cmd.txt"
	setsid /usr/bin/time -f "$TIME_FMT" -o "$STEP/producer.time" \
		kcat -P -b "$DST" -t "$TOPIC" -D '\x1e' "${key[@]}" "${z[@]}" <"$STEP/pipe" >"$STEP/producer.out" 2>"$STEP/producer.err" &
	p=$!
	printf '%s\n' "$p" >>"$RUN/pids"
	setsid /usr/bin/time -f "$TIME_FMT" -o "$STEP/consumer.time" \
		kcat -C -b "$SRC" -t "$TOPIC" -o beginning -e -q -D '\x1e' "${key[@]}" >"$STEP/pipe" 2>"$STEP/consumer.err" </dev/null &
	c=$!
	printf '%s\n' "$c" >>"$RUN/pids"
	await "$c" "$BENCH_TIMEOUT" || rc=$?
	await "$p" "$BENCH_TIMEOUT" || rc=$?
	((rc == 0)) || die "the kcat pipe failed (exit status $rc)"
	await "$WAITER" 60 || true
	check_target
}

# A 1-record window, 5 times: produce one record to a 1-partition topic, then
# `catchup run` (file store); the first run before them copies the first
# record (cold store).
step_window() {
	local i
	"$BIN/kafkactl" recreate -brokers "$SRC" -topic "$TOPIC" -partitions 1
	"$BIN/kafkactl" recreate -brokers "$DST" -topic "$TOPIC" -partitions 1
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	for i in 0 1 2 3 4 5; do
		cmdline "$STEP/cmd.txt" "$BIN/kafkactl" produce -brokers "$SRC" -topic "$TOPIC"
		"$BIN/kafkactl" produce -brokers "$SRC" -topic "$TOPIC"
		timed "run$i" "$BIN/catchup" run -c "$STEP/catchup.yaml" --json
	done
	{
		head -n 2 "$STEP/cmd.txt"
		echo "# the two commands above 6 times: the first run copies the first record (no checkpoint yet)"
	} >"$STEP/cmd.tmp"
	mv "$STEP/cmd.tmp" "$STEP/cmd.txt"
	RECORDS=6
	check_target
}

# Latency of a continuous copy at a steady 1 MB/s (1,000 records of 1 KiB a
# second), single-broker target: `catchup run --every 1s` (file store) or
# MirrorMaker 2 tuned, started first and primed (a short probe repeated until
# its records arrive), then `kafkactl latency` produces for
# BENCH_LATENCY_S seconds and reads the target: produce time to visibility.
step_latency() { # step_latency catchup|mm2
	local pid i
	"$BIN/kafkactl" recreate -brokers "$SRC" -topic "$TOPIC" -partitions "$BENCH_PARTITIONS"
	fresh_target
	if [[ "$1" == catchup ]]; then
		catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
		cmdline "$STEP/cmd.txt" "$BIN/catchup" run -c "$STEP/catchup.yaml" --every 1s
		launch "$STEP/copier.out" "$STEP/copier.err" "$BIN/catchup" run -c "$STEP/catchup.yaml" --every 1s
	else
		render "$HERE/templates/mm2.properties" "$STEP/mm2.properties" S="src$STEP_N" T="dst$STEP_N" SRC="$SRC" DST="$DST" \
			TOPIC="$TOPIC" TASKS="$BENCH_PARTITIONS" RF="$RF" COMPRESSION=none
		render "$HERE/templates/mm2-tuned.properties" "$STEP/mm2-tuned.properties" S="src$STEP_N" T="dst$STEP_N" COMPRESSION=none
		cat "$STEP/mm2-tuned.properties" >>"$STEP/mm2.properties"
		jcmd "${HEAP_MM2[*]}" "$MM2_LIBS" "$STEP/mm2.log" INFO
		cmdline "$STEP/cmd.txt" "${JCMD[@]}" org.apache.kafka.connect.mirror.MirrorMaker "$STEP/mm2.properties"
		launch "$STEP/copier.out" "$STEP/copier.err" "${JCMD[@]}" org.apache.kafka.connect.mirror.MirrorMaker "$STEP/mm2.properties"
	fi
	pid="$LAUNCHED"
	for ((i = 0; ; i++)); do
		"$BIN/kafkactl" latency -brokers "$SRC" -target "$DST" -topic "$TOPIC" -for 2s -warmup 0s >>"$STEP/prime.out" 2>>"$STEP/prime.err" && break
		((i < 10)) || die "the copier did not start copying (see $STEP/prime.err)"
	done
	put "$STEP/step.env" primed_probes "$((i + 1))"
	put "$STEP/step.env" latency_s "$BENCH_LATENCY_S"
	cmdline "$STEP/cmd.txt" "$BIN/kafkactl" latency -brokers "$SRC" -target "$DST" -topic "$TOPIC" -rate 1000 -value 1024 -for "${BENCH_LATENCY_S}s" -warmup 5s
	timed latency "$BIN/kafkactl" latency -brokers "$SRC" -target "$DST" -topic "$TOPIC" -rate 1000 -value 1024 -for "${BENCH_LATENCY_S}s" -warmup 5s
	put "$STEP/step.env" copier_cpu_s "$(proc_cpu "$pid")"
	stop_group "$pid"
}

# run_ab TOOL FUNCTION ARGS...: run_step TOOL with this commit's binaries
# and, with a baseline, TOOL-baseline with the baseline's. The baseline goes
# second in odd rounds and first in even ones, so that neither always runs
# in the wake of the other (a deleted target topic, a warmer cache).
run_ab() {
	local tool="$1"
	shift
	if [[ -z "$BASE" ]]; then
		run_step "$KEY" "$tool" "$@" "$BIN"
	elif ((ROUND % 2)); then
		run_step "$KEY" "$tool" "$@" "$BIN"
		run_step "$KEY" "$tool-baseline" "$@" "$BIN/baseline"
	else
		run_step "$KEY" "$tool-baseline" "$@" "$BIN/baseline"
		run_step "$KEY" "$tool" "$@" "$BIN"
	fi
}

# ---------------------------------------------------------------- the run

# use_topology single|rf3: the target of the steps that follow; KEY is the
# shape as the results name it (SHAPE, or SHAPE-rf3).
use_topology() {
	TOPO="$1"
	case "$TOPO" in
	single) DST="$DST1" DST_PIDS="$DST1_PID" RF=1 KEY="$SHAPE" ;;
	rf3) DST="$DST3" DST_PIDS="$DST3_PIDS" RF=3 KEY="$SHAPE-rf3" ;;
	*) die "unknown topology $TOPO (single, rf3)" ;;
	esac
}

TOPO=single KEY=""
for SHAPE in $BENCH_SHAPES; do
	KEYED=0 COMPRESSION=none
	case "$SHAPE" in
	1k | 1k-zstd | 1k-keyed)
		VALUE=1024
		RECORDS="$(records_of "$BENCH_GB" 1000000)"
		;;
	100b)
		VALUE=100
		RECORDS="$(records_of "$BENCH_SMALL_GB" 10000000)"
		;;
	*) die "unknown shape $SHAPE (1k, 100b, 1k-zstd, 1k-keyed)" ;;
	esac
	[[ "$SHAPE" == 1k-zstd ]] && COMPRESSION=zstd
	[[ "$SHAPE" == 1k-keyed ]] && KEYED=1
	TOPIC="bench-$SHAPE"
	BASE_RECORDS="$RECORDS"
	use_topology single
	run_step "$KEY" seed step_seed
	if [[ " ${FAILED[*]} " == *" $KEY seed "* ]]; then
		continue
	fi
	for t in $(topologies_of "$SHAPE"); do
		use_topology "$t"
		RECORDS="$BASE_RECORDS"
		run_step "$KEY" warmup step_warmup
		# The repeated steps, interleaved round by round (see the header).
		for ((ROUND = 1; ROUND <= $(repeat_of "$SHAPE"); ROUND++)); do
			if has_tool ceiling; then
				run_ab fetch-only step_ceiling_fetch
				run_ab produce-only step_ceiling_produce
				run_step "$KEY" fetch+produce step_ceiling_both "$BIN"
			fi
			if has_tool catchup; then
				run_ab catchup step_catchup file
			fi
			has_tool franzcopy && run_step "$KEY" franzcopy step_franzcopy
			has_tool mm2 && run_step "$KEY" mm2 step_mm2
			has_tool mm2-tuned && run_step "$KEY" mm2-tuned step_mm2 tuned
			has_tool mm2-eos && run_step "$KEY" mm2-eos step_mm2 eos
			has_tool mm1 && run_step "$KEY" mm1 step_mm1
			has_tool kcat && run_step "$KEY" kcat step_kcat
		done
		ROUND=1
		if has_tool perf; then
			run_step "$KEY" producer-perf step_producer_perf
			run_step "$KEY" consumer-perf step_consumer_perf
		fi
		has_tool catchup-dynamodb && run_step "$KEY" catchup-dynamodb step_catchup dynamodb "$BIN"
		has_tool profile && run_step "$KEY" profile step_profile
	done
	use_topology single
	if [[ "$SHAPE" == 1k ]] && has_tool catchup; then
		for x in $BENCH_SCALES; do
			RECORDS=$((BASE_RECORDS * x))
			run_step "$KEY" "seed-x$x" step_seed_more "$RECORDS"
			run_step "$KEY" "catchup-x$x" step_catchup file "$BIN"
		done
	fi
done
if has_tool latency; then
	SHAPE=latency TOPIC=bench-latency VALUE=1024 RECORDS=0 COMPRESSION=none KEYED=0
	use_topology single
	run_step latency latency-catchup step_latency catchup
	run_step latency latency-mm2-tuned step_latency mm2
fi
if has_tool window; then
	SHAPE=window TOPIC=bench-window VALUE=1024 RECORDS=1 COMPRESSION=none KEYED=0
	use_topology single
	run_step window catchup-window step_window
fi

put "$META" finished "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put "$META" total_s "$((($(now_ms) - T0) / 1000))"
put "$META" load_end "$(load1)"
put "$META" failed "${FAILED[*]}"
if [[ -n "$BENCH_REPORT" ]]; then
	mkdir -p "$(dirname "$BENCH_REPORT")"
	"$BIN/report" -in "$OUT" -scale "$REPO/bench/SCALE.md" -o "$BENCH_REPORT"
	log "wrote $BENCH_REPORT"
fi
if ((${#FAILED[@]})); then
	log "failed steps: ${FAILED[*]}"
	exit 1
fi
