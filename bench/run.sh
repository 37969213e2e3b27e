#!/usr/bin/env bash
# Usage: bench/run.sh            (what `make bench` runs)
#
# Side-by-side benchmark of catchup on real Apache Kafka brokers (KRaft,
# started with test/kafka/start.sh on free loopback ports), made to resolve
# a 10 % difference: it seeds a source backlog with Kafka's own
# ProducerPerformance, then copies it with each tool, each copy into a
# freshly deleted and recreated target topic:
#   model      bench/cmd/model, the per-byte limit: each byte read once,
#              CRC-checked twice, copied once and written once, on
#              multi-partition fetches and produce requests at catchup's
#              fetch and batch sizes; the report reads every copier as a
#              share of it and flags a copier at or above it
#   catchup    `catchup run` at its defaults, file store
#   catchup-dynamodb   the same with the DynamoDB store (dynalite on loopback), once
#   franzcopy  bench/cmd/franzcopy: the franz-go copier a Go engineer would
#              write instead (assigned partitions, idempotent producer,
#              partition, key, headers and timestamp kept)
#   perf       Kafka's ProducerPerformance (into the target) and
#              ConsumerPerformance (from the source), once, for reference
#   mm2        MirrorMaker 2, dedicated mode (connect-mirror, bench/pom.xml),
#              producer and consumer at their defaults
#   mm2-tuned  the same with the throughput settings of
#              bench/templates/mm2-tuned.properties (their source is there)
#   mm2-eos    mm2-tuned with exactly.once.source.support=enabled
#              (bench/templates/mm2-eos.properties), the peer's exact mode
#   mm1        MirrorMaker 1 (kafka.tools.MirrorMaker of Kafka 3.9), no-loss settings
#   kcat       kcat -C | kcat -P, the naive baseline
#   profile    `catchup run` once under `perf record` (kernel included),
#              then catchup and the model under it in BENCH_PROFILE_ROUNDS
#              interleaved rounds, for their CPU a GB side by side by area;
#              without perf, the engine in bench/cmd/profile under pprof
#   latency    (once) produce to visibility at a steady 1 MB/s, p50/p99:
#              `catchup run --every 1s` and MirrorMaker 2 tuned, running continuously
#   window     (once, not per shape) a 1-record window, 5 times, file store
# for four record shapes, 8 partitions each: 1 KiB values ("1k"), 100-byte
# values ("100b"), 1 KiB values in zstd batches copied to a zstd target
# ("1k-zstd"), and 1 KiB values with keys and two headers ("1k-keyed",
# seeded by kafkactl seed), on two topologies (BENCH_TOPOLOGIES): "single",
# the source broker to a single-broker target, and "rf3", the same source
# to a 3-broker target (a KRaft controller and three brokers) with topics
# of replication factor 3, min.insync.replicas=2, every copier at
# acks=all; an rf3 step's shape is SHAPE-rf3 in the results. Then `catchup
# run` again on a 1 KiB backlog BENCH_SCALES times larger (memory must
# stay flat).
#
# The method, per shape and topology:
#   calibration  (not reported) the model copies the backlog once as a
#              warm-up (the brokers' JIT), then each fast copier (model,
#              catchup, franzcopy, and catchup-baseline with a baseline)
#              copies it once, timed: a copier's step is then as many
#              copies of the backlog, back to back, as last BENCH_STEP_S
#              seconds or more (each copy a fresh process and a fresh
#              target topic, recreated untimed).
#   rounds     BENCH_REPEAT rounds; each round runs every fast copier's
#              step once, the order rotated from round to round, so that
#              a drift in the machine's load hits them alike; the slow
#              peers (the MirrorMakers, kcat) follow in the first
#              BENCH_PEER_REPEAT rounds.
#   CPU        each copy runs under `perf stat -e task-clock,user_time,
#              system_time` (the copier process and its threads, user and
#              kernel); where perf cannot run, /usr/bin/time's rusage, and
#              the report says which.
#   requests   every broker runs the Prometheus JMX exporter's agent
#              (start.sh's CATCHUP_KAFKA_METRICS=1), and Kafka's own request
#              counters are read right before and after each fast copy:
#              produce requests and follower fetches on the target, fetches
#              and all requests on the source, a GB in the report.
#   slow peers measured over a window of their steady state on the same
#              backlog: from when the target holds BENCH_WINDOW_FROM % of
#              it, for BENCH_WINDOW_S seconds or until 90 %, records and
#              CPU-s (from /proc) in that window; then stopped.
#   pinned     BENCH_PIN=1: every broker thread on CPU 0, every copier on
#              CPU 1 (taskset), to read a copier's own cost.
# The report shows each fast copier's median with its lowest–highest over
# the rounds, and a ratio between two tools as decided only when their
# ranges do not overlap. The results (raw outputs, one folder per step) go
# to BENCH_OUT, and bench/cmd/report turns them into docs/benchmarks.md.
#
# Baseline: with BENCH_BASELINE=REV (any git revision), catchup is also
# built from REV into $BENCH_OUT/bin/baseline/ (from a git archive unpacked
# in the run's temporary folder and removed after the build) and runs as
# one more fast copier, catchup-baseline, in the same calibration and
# rounds: a change measured side by side in one run, e.g.
#   BENCH_QUICK=1 BENCH_BASELINE=main bench/run.sh
#
# Environment (defaults in brackets):
#   BENCH_QUICK=1      a reviewer's run: the 1 KiB shape on the single-broker
#                      target, tools "model catchup franzcopy mm2-tuned mm1
#                      kcat profile", the fast copiers at full precision
#                      (BENCH_REPEAT rounds of BENCH_STEP_S s steps);
#                      explicit settings win
#   BENCH_GB           1 KiB backlog, in units of 1e6 records (1.024 GB of values) [1]
#   BENCH_SMALL_GB     100-byte backlog, in units of 1e7 records (1 GB of values) [0.5]
#   BENCH_SCALES       multiples of the 1 KiB backlog for the memory check ["4"; "" skips]
#   BENCH_SHAPES       ["1k 100b 1k-zstd 1k-keyed"; quick "1k"]
#   BENCH_TOPOLOGIES   ["single rf3 100b=single 1k-zstd=single 1k-keyed=single"; quick "single"];
#                      SHAPE=T1+T2 for a shape that differs
#   BENCH_TOOLS        ["model perf catchup catchup-dynamodb franzcopy mm2 mm2-tuned mm2-eos mm1 kcat profile latency window"]
#   BENCH_REPEAT       rounds of the fast copiers ["5 1k-zstd=3 1k-keyed=3"]; "N SHAPE=M ...": M for SHAPE
#   BENCH_PEER_SHAPES  shapes on which every slow peer and perf tool runs ["1k"]; the
#                      other shapes run the fast copiers, MirrorMaker 2 tuned and the profile
#   BENCH_STEP_S       seconds a fast copier's step lasts at least [20]
#   BENCH_PEER_REPEAT  rounds that also run the slow peers [1]
#   BENCH_WINDOW_S     a slow peer's window, seconds [20]
#   BENCH_WINDOW_FROM  where the window opens, % of the backlog in the target [20]
#   BENCH_PROFILE_ROUNDS  rounds of catchup and the model under perf record [3]
#   BENCH_PIN=1        brokers on CPU 0, copiers on CPU 1 [0]
#   BENCH_LATENCY_S    seconds of steady 1 MB/s for the latency steps [60; quick 20]
#   BENCH_PARTITIONS   [8]
#   BENCH_BASELINE     git revision to compare with, side by side ["": none]
#   BENCH_OUT          results folder [bench/out/<UTC time>]
#   BENCH_REPORT       the report written at the end ["docs/benchmarks.md"; "" skips]
#   BENCH_KAFKA_VERSION / BENCH_MM1_VERSION / BENCH_MM2_VERSION  [4.4.0 / 3.9.2 / 4.3.1]
#   BENCH_BROKER_HEAP  broker heap ["-Xms1g -Xmx1g"]
#   BENCH_TIMEOUT      seconds one measurement may take [3600]
#   BENCH_MIN_FREE_GIB free space TMPDIR must have at the start [50 with the
#                      rf3 topology, else 40; 0 skips the check]
#   BENCH_KEEP=1       keep the brokers' data folder
#
# Needs: Go, Java 17+, Maven, python3 (test/kafka), /usr/bin/time, curl (each
# installed with apt-get when missing and run as root), perf (linux-perf,
# installed the same way where it may be; else rusage, said in the
# report), taskset for BENCH_PIN, node and
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
	BENCH_SCALES="${BENCH_SCALES-}"
	BENCH_SHAPES="${BENCH_SHAPES:-1k}"
	BENCH_TOPOLOGIES="${BENCH_TOPOLOGIES:-single}"
	BENCH_TOOLS="${BENCH_TOOLS:-model catchup franzcopy mm2-tuned mm1 kcat profile}"
	BENCH_LATENCY_S="${BENCH_LATENCY_S:-20}"
fi
BENCH_GB="${BENCH_GB:-1}"
BENCH_SMALL_GB="${BENCH_SMALL_GB:-0.5}"
BENCH_SCALES="${BENCH_SCALES-4}"
BENCH_SHAPES="${BENCH_SHAPES:-1k 100b 1k-zstd 1k-keyed}"
BENCH_TOPOLOGIES="${BENCH_TOPOLOGIES:-single rf3 100b=single 1k-zstd=single 1k-keyed=single}"
BENCH_TOOLS="${BENCH_TOOLS:-model perf catchup catchup-dynamodb franzcopy mm2 mm2-tuned mm2-eos mm1 kcat profile latency window}"
BENCH_PARTITIONS="${BENCH_PARTITIONS:-8}"
BENCH_REPEAT="${BENCH_REPEAT:-5 1k-zstd=3 1k-keyed=3}"
BENCH_PEER_SHAPES="${BENCH_PEER_SHAPES-1k}"
BENCH_STEP_S="${BENCH_STEP_S:-20}"
BENCH_PEER_REPEAT="${BENCH_PEER_REPEAT:-1}"
BENCH_WINDOW_S="${BENCH_WINDOW_S:-20}"
BENCH_WINDOW_FROM="${BENCH_WINDOW_FROM:-20}"
BENCH_PROFILE_ROUNDS="${BENCH_PROFILE_ROUNDS:-3}"
BENCH_PIN="${BENCH_PIN:-0}"
BENCH_BASELINE="${BENCH_BASELINE:-}"
BENCH_OUT="${BENCH_OUT:-$HERE/out/$(date -u +%Y%m%dT%H%M%SZ)}"
BENCH_REPORT="${BENCH_REPORT-$REPO/docs/benchmarks.md}"
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
# every_peer SHAPE: whether every slow peer and perf tool runs on SHAPE
# (BENCH_PEER_SHAPES); the other shapes compare the fast copiers and
# MirrorMaker 2 tuned, so that the whole run stays within an hour.
every_peer() { [[ " $BENCH_PEER_SHAPES " == *" $1 "* ]]; }
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
for v in BENCH_STEP_S BENCH_PEER_REPEAT BENCH_WINDOW_S BENCH_WINDOW_FROM BENCH_PROFILE_ROUNDS; do
	[[ "${!v}" =~ ^[0-9]+$ ]] || die "$v=${!v}: want a whole number"
done
[[ "$BENCH_PIN" == 0 || "$BENCH_PIN" == 1 ]] || die "BENCH_PIN=$BENCH_PIN: want 0 or 1"
((BENCH_PIN == 0)) || (($(nproc) >= 2)) || die "BENCH_PIN=1 needs 2 CPUs (the brokers on CPU 0, the copier on CPU 1); this machine has $(nproc)"
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
# The brokers keep a deleted target topic's files for a minute
# (file.delete.delay.ms), so a minute of copies is on disk at once: the
# fast copies follow each other with well under a second between them, so
# that is some 30 single-broker copies of the 1 KiB or keyed backlog (about
# 1 GiB each), or 14 copies on the 3-broker target (3 replicas each), plus
# the source topics. A disk that fills takes brokers down mid-run, so check
# before the hour starts.
need_gib="${BENCH_MIN_FREE_GIB:-$(has_topology rf3 && echo 50 || echo 40)}"
free_gib="$(df -Pk "$RUN" | awk 'NR == 2 { print int($4 / 1048576) }')"
if ((free_gib < need_gib)); then
	rmdir "$RUN"
	die "$(dirname "$RUN") has $free_gib GiB free; this run needs about $need_gib GiB for the brokers' logs: free space there, point TMPDIR at a larger disk, or set BENCH_MIN_FREE_GIB=0 to start anyway"
fi
BIN="$OUT/bin"
META="$OUT/meta.env"
: >"$RUN/pids"
: >"$META"
mkdir -p "$OUT/steps" "$BIN"
STEP_N=0
REPS=1 # copies of the backlog in a fast copier's step (calibrated per shape)
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
for c in go:golang-go mvn:maven python3:python3 /usr/bin/time:time setsid:util-linux curl:curl; do
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

# perf stat counts the CPU of the copier process and its threads, user and
# kernel; where it cannot run (not installed, perf_event_paranoid, a
# container without the syscall), the copier's rusage from /usr/bin/time.
PERF=0
if command -v perf >/dev/null || apt_install linux-perf; then
	if perf stat -x, -e task-clock -o "$RUN/perf.check" -- true 2>"$RUN/perf.err"; then
		PERF=1
	fi
fi
PIN=()
if ((BENCH_PIN)); then
	command -v taskset >/dev/null || die "BENCH_PIN=1 needs taskset (Debian package util-linux)"
	PIN=(taskset -c 1)
fi

# ---------------------------------------------------------------- machine, versions

put "$META" started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put "$META" cpu_model "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
put "$META" cores "$(nproc)"
put "$META" mem_gib "$(awk '/MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)"
put "$META" kernel "$(uname -sr)"
put "$META" load_start "$(load1)"
# On a virtual machine that hands the memory it frees back to its host
# (Linux free page reporting), how much it handed back during the run: each
# copy frees a deleted target's log pages and writes new ones.
REPORTED=/sys/module/page_reporting/parameters/reported_kib
if [[ -r "$REPORTED" ]]; then put "$META" page_reported_kib_start "$(cat "$REPORTED")"; fi
put "$META" java "$java_version"
put "$META" go "$(go version)"
put "$META" commit "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || echo '+uncommitted changes')"
put "$META" kafka_version "$BENCH_KAFKA_VERSION"
if ((PERF)); then
	put "$META" cpu_source "perf stat (task-clock of the copier process and its threads, user and kernel; $(perf --version))"
else
	put "$META" cpu_source "rusage (user+sys from /usr/bin/time; perf stat could not run here: $(head -c 200 "$RUN/perf.err" 2>/dev/null | tr '\n' ' ' || echo not installed))"
fi
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
put "$META" step_s "$BENCH_STEP_S"
put "$META" peer_repeat "$BENCH_PEER_REPEAT"
put "$META" peer_shapes "$BENCH_PEER_SHAPES"
put "$META" window_s "$BENCH_WINDOW_S"
put "$META" window_from "$BENCH_WINDOW_FROM"
put "$META" pin "$BENCH_PIN"
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
	go build -trimpath -o "$BIN/" ./bench/cmd/model ./bench/cmd/kafkactl ./bench/cmd/profile ./bench/cmd/report ./bench/cmd/franzcopy)
if [[ -n "$BASE" ]]; then
	# git archive, not git worktree add: nothing is registered in the
	# repository that another session works in.
	mkdir -p "$RUN/baseline-src" "$BIN/baseline"
	git -C "$REPO" archive "$base_full" | tar -x -C "$RUN/baseline-src"
	(cd "$RUN/baseline-src" && go build -trimpath -o "$BIN/baseline/" ./cmd/catchup) ||
		die "building catchup of the baseline $BASE failed (see above)"
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
		CATCHUP_KAFKA_SASL_SSL=0 CATCHUP_KAFKA_METRICS=1 "$REPO/test/kafka/start.sh" "$RUN/kafka/$c" >"$RUN/$c.start" 2>"$RUN/$c.start.err" &
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
			CATCHUP_KAFKA_METRICS=1 CATCHUP_KAFKA_ROLE=broker CATCHUP_KAFKA_NODE_ID=$n CATCHUP_KAFKA_VOTERS="$voters" \
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
# the brokers' counters (start.sh's METRICS=, the Prometheus JMX exporter)
SRC_METRICS="$(field "$RUN/source.start" METRICS)" DST1_METRICS="$(field "$RUN/target.start" METRICS)"
DST3="" DST3_PIDS="" DST3_METRICS=""
WATCHED="$SRC_PID:$RUN/kafka/source $DST1_PID:$RUN/kafka/target"
if has_topology rf3; then
	for n in 1 2 3; do
		DST3+="${DST3:+,}$(field "$RUN/kafka/rf3/broker-$n.start" BROKERS)"
		p="$(field "$RUN/kafka/rf3/broker-$n.start" PID)"
		DST3_PIDS+="$p "
		DST3_METRICS+="$(field "$RUN/kafka/rf3/broker-$n.start" METRICS) "
		WATCHED+=" $p:$RUN/kafka/rf3/broker-$n"
	done
	p="$(cat "$RUN/kafka/rf3/controller/pid")"
	DST3_PIDS+="$p"
	WATCHED+=" $p:$RUN/kafka/rf3/controller"
fi
DST="$DST1" DST_PIDS="$DST1_PID" DST_METRICS="$DST1_METRICS" RF=1
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
if ((BENCH_PIN)); then
	# every thread of every broker JVM on CPU 0 (threads they start later
	# inherit it); the copiers run under taskset -c 1 (PIN)
	for p in $SRC_PID $DST1_PID $DST3_PIDS; do
		taskset -a -p -c 0 "$p" >/dev/null || die "taskset -a -p -c 0 $p failed"
	done
	log "pinned: brokers on CPU 0, copiers on CPU 1 (BENCH_PIN=1)"
fi

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

# check_target: the target topic must hold exactly the backlog; records the
# bytes of its log (one replica), the last copy's in a step of several.
check_target() {
	local n
	check_count
	n="$("$BIN/kafkactl" logbytes -brokers "$DST" -topic "$TOPIC")"
	put "$STEP/step.env" target_log_bytes "$n"
}

# check_count: the target topic must hold exactly the backlog.
check_count() {
	local n
	n="$("$BIN/kafkactl" count -brokers "$DST" -topic "$TOPIC")"
	put "$STEP/step.env" target_records "$n"
	[[ "$n" == "$RECORDS" ]] || die "the target holds $n records, want $RECORDS"
}

# start_waiter: poll the target until it holds the backlog, in the
# background (into $STEP/wait.json): when the first record arrived.
start_waiter() {
	launch "$STEP/wait.json" "$STEP/wait.err" "$BIN/kafkactl" wait -brokers "$DST" -topic "$TOPIC" \
		-want "$RECORDS" -since "$(now_ms)" -timeout "${BENCH_TIMEOUT}s"
	WAITER="$LAUNCHED"
}

catchup_config() { # catchup_config FILE STORE
	render "$HERE/templates/catchup.yaml" "$1" STORE="$2" SRC="$SRC" DST="${DST//,/\", \"}" TOPIC="$TOPIC" COMPRESSION="$COMPRESSION"
}

# seed N: append N records of VALUE bytes to the source topic: keyed, with
# kafkactl seed; otherwise with ProducerPerformance, its own values (random
# letters) in uncompressed batches, and in compressed ones values drawn from
# JSON orders (docs/performance.md says why).
seed() {
	local n="$1" t
	jcmd "${HEAP_PERF[*]}" "$KAFKA_LIBS" "$STEP/java.log" WARN
	put "$STEP/step.env" records "$n"
	[[ "$KEYED" == 1 ]] || perf_values
	t="$(now_ms)"
	if [[ "$KEYED" == 1 ]]; then
		put "$STEP/step.env" seeder "kafkactl seed (franz-go, acks=all, uncompressed)"
		timed seed "$BIN/kafkactl" seed -brokers "$SRC" -topic "$TOPIC" -want "$n" -value "$VALUE"
	else
		timed seed "${JCMD[@]}" org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$SRC" \
			--topic "$TOPIC" --num-records "$n" "${PERF_VALUES[@]}" --throughput -1 \
			--command-property acks=all --command-property compression.type="$COMPRESSION"
	fi
	put "$STEP/step.env" seed_s "$((($(now_ms) - t) / 1000))"
}

# perf_values: sets PERF_VALUES to ProducerPerformance's value arguments:
# --record-size VALUE, or with compression --payload-file of 10,000 lines of
# JSON orders (kafkactl payloads, the same lines every time) in $STEP.
perf_values() {
	PERF_VALUES=(--record-size "$VALUE")
	if [[ "$COMPRESSION" != none ]]; then
		"$BIN/kafkactl" payloads -want 10000 -value "$VALUE" >"$STEP/payloads.txt"
		PERF_VALUES=(--payload-file "$STEP/payloads.txt")
		put "$STEP/step.env" values "JSON orders from kafkactl payloads"
	fi
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

# measured NAME CMD...: timed, with CMD on CPU 1 when pinned (BENCH_PIN) and
# its CPU counted by perf stat into $STEP/NAME.perf where perf runs.
measured() {
	local name="$1"
	shift
	local -a pre=("${PIN[@]}")
	if ((PERF)); then
		pre+=(perf stat -x "," -e "task-clock,user_time,system_time" -o "$STEP/$name.perf" --)
	fi
	timed "$name" "${pre[@]}" "$@"
}

# counters "URL...": the requests the brokers whose counters URL... serve
# (start.sh's METRICS=) have received, summed over them: "PRODUCE FETCH
# FOLLOWER ALL". Kafka counts every fetch as Fetch and again as
# FetchFollower or FetchConsumer: FOLLOWER is the followers' part of FETCH,
# and ALL counts each request once. An exporter that cannot be read, or
# that failed to read the broker's counters, fails the step (its copy is
# then not reported either).
counters() {
	local u one text=""
	local -a urls
	read -r -a urls <<<"$1"
	((${#urls[@]})) || die "no broker counters to read (start.sh printed no METRICS=)"
	for u in "${urls[@]}"; do
		one="$(curl -sf --max-time 10 -g "$u?name[]=kafka_network_requests_total&name[]=jmx_scrape_error")" ||
			die "could not read the broker counters at $u"
		# (a broker that has received no request yet has no request counter)
		[[ "$one" == *$'\n'"jmx_scrape_error 0.0"* ]] || die "the exporter at $u did not read the broker's counters: $one"
		text+="$one"$'\n'
	done
	awk '
		/^kafka_network_requests_total\{/ {
			match($0, /request="[^"]*"/)
			r = substr($0, RSTART + 9, RLENGTH - 10)
			n[r] += $NF
			if (r != "FetchFollower" && r != "FetchConsumer") all += $NF
		}
		END { printf "%.0f %.0f %.0f %.0f\n", n["Produce"], n["Fetch"], n["FetchFollower"], all }' <<<"$text"
}

# requests_into NAME: sets the array NAME to the target's counters, then the
# source's (counters' four numbers each).
requests_into() {
	local -n into="$1"
	local d s
	d="$(counters "$DST_METRICS")"
	s="$(counters "$SRC_METRICS")"
	# shellcheck disable=SC2034 # into is a nameref: this sets the caller's array
	read -r -a into <<<"$d $s"
}

# copies NAME PREP CMD...: REPS runs of CMD (the copy of the whole backlog,
# REPS from the calibration), each into a freshly recreated target topic
# (not timed) after `PREP I`, each measured as NAME-I; the target's first
# record is timed on the first run. The brokers' request counters are read
# right before and after each run, and their sums over the runs recorded:
# produce requests and follower fetches on the target, fetches and all
# requests on the source (the waiter polls only the target).
copies() {
	local name="$1" prep="$2" i n="${REPS:-1}" k
	local -a before after sum=(0 0 0 0 0 0 0 0)
	shift 2
	put "$STEP/step.env" runs "$n"
	for ((i = 1; i <= n; i++)); do
		fresh_target
		"$prep" "$i"
		((i > 1)) || start_waiter
		requests_into before
		measured "$name-$i" "$@"
		requests_into after
		for k in "${!sum[@]}"; do
			sum[k]=$((sum[k] + after[k] - before[k]))
		done
		((i > 1)) || await "$WAITER" 60 || true
		check_target
	done
	put "$STEP/step.env" dst_produce_requests "${sum[0]}"
	put "$STEP/step.env" dst_follower_fetches "${sum[2]}"
	put "$STEP/step.env" src_fetch_requests "$((sum[5] - sum[6]))"
	put "$STEP/step.env" src_all_requests "${sum[7]}"
}

# The fast copiers (the model, catchup, franzcopy and, with a baseline,
# catchup-baseline): FAST_TOOLS, in the order of the first round; later
# rounds rotate it, so that no copier always runs in another's wake.
FAST_TOOLS=()
for t in model catchup franzcopy; do
	has_tool "$t" && FAST_TOOLS+=("$t")
	[[ "$t" == catchup && -n "$BASE" ]] && has_tool catchup && FAST_TOOLS+=(catchup-baseline)
done
SLOW_TOOLS=()
for t in mm2 mm2-tuned mm2-eos mm1 kcat; do
	has_tool "$t" && SLOW_TOOLS+=("$t")
done

# run_fast TOOL: its step in this round, REPS_TOOL copies long.
run_fast() {
	local tool="$1" var="REPS_${1//-/_}"
	REPS="${!var:-1}"
	case "$tool" in
	model) run_step "$KEY" model step_model ;;
	catchup) run_step "$KEY" catchup step_catchup file "$BIN" ;;
	catchup-baseline) run_step "$KEY" catchup-baseline step_catchup file "$BIN/baseline" ;;
	franzcopy) run_step "$KEY" franzcopy step_franzcopy ;;
	esac
	REPS=1
}

# The calibration (not reported) of a shape and topology: the model once as
# a warm-up (the brokers' JIT compiles their fetch and produce paths during
# the first large transfer: whoever went first would pay for it), then
# each fast copier once, timed: REPS_TOOL, the number of copies of the
# backlog that make its step last BENCH_STEP_S seconds or more.
step_calibrate() {
	local t
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	measured warmup "$BIN/model" -from "$SRC" -to "$DST" -topic "$TOPIC"
	for t in "${FAST_TOOLS[@]}"; do
		calibrate_one "$t"
		put "$STEP/step.env" "wall_${t//-/_}" "$(cut -d' ' -f1 "$STEP/$t/"*-1.time | tail -n 1)"
	done
}

calibrate_one() { # calibrate_one TOOL: one copy by TOOL, in $STEP/TOOL
	local STEP="$STEP/$1" REPS=1
	mkdir -p "$STEP"
	case "$1" in
	model) step_model ;;
	catchup) step_catchup file "$BIN" ;;
	catchup-baseline) step_catchup file "$BIN/baseline" ;;
	franzcopy) step_franzcopy ;;
	esac
}

# calibrated: REPS_TOOL for each fast copier from the calibration step's walls.
calibrated() {
	local t w n
	for t in "${FAST_TOOLS[@]}"; do
		w="$(sed -n "s/^wall_${t//-/_}=//p" "$STEP/step.env")"
		n="$(awk -v w="${w:-0}" -v s="$BENCH_STEP_S" 'BEGIN { if (w <= 0) { print 1; exit } n = int(s / w); if (n * w < s) n++; print (n < 1 ? 1 : n) }')"
		printf -v "REPS_${t//-/_}" '%s' "$n"
		log "calibrated: $t copies the backlog in ${w:-?} s: $n copies a step"
	done
}

step_model() {
	put "$STEP/step.env" records "$RECORDS"
	copies model : "$BIN/model" -from "$SRC" -to "$DST" -topic "$TOPIC"
}

step_producer_perf() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	jcmd "${HEAP_PERF[*]}" "$KAFKA_LIBS" "$STEP/java.log" WARN
	perf_values
	# Its best settings at catchup's durability (acks=all): large batches
	# given time to fill, buffer room for them, the shape's compression.
	timed perf "${JCMD[@]}" org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$DST" \
		--topic "$TOPIC" --num-records "$RECORDS" "${PERF_VALUES[@]}" --throughput -1 \
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
	CATCHUP_STORE="$1" CATCHUP_BIN="$2"
	put "$STEP/step.env" records "$RECORDS"
	copies catchup prep_catchup "$2/catchup" run -c "$STEP/catchup.yaml" --json
}

prep_catchup() { # prep_catchup I: a fresh store for run I (named after the step's folder: the calibration's are in one step)
	local store id="${STEP#"$OUT"/steps/}"
	id="${id//\//-}-$1"
	if [[ "$CATCHUP_STORE" == dynamodb ]]; then
		store="dynamodb://bench-$id"
		catchup_config "$STEP/catchup.yaml" "$store"
		"$CATCHUP_BIN/catchup" init-store -c "$STEP/catchup.yaml" >"$STEP/init-store-$1.out" 2>&1
	else
		store="file://$RUN/store-$id"
		catchup_config "$STEP/catchup.yaml" "$store"
	fi
	put "$STEP/step.env" store "$store"
}

step_franzcopy() {
	put "$STEP/step.env" records "$RECORDS"
	copies franzcopy : "$BIN/franzcopy" -from "$SRC" -to "$DST" -topic "$TOPIC" -compression "$COMPRESSION"
}

# The profile: `catchup run` under perf record (the kernel included), its
# symbols summarised by perf report; where perf cannot run, catchup's
# engine in bench/cmd/profile under the Go CPU profiler.
step_profile() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N"
	if ((PERF)); then
		put "$STEP/step.env" profiler perf
		timed profile "${PIN[@]}" perf record -e cpu-clock -F 4999 -o "$STEP/perf.data" -- "$BIN/catchup" run -c "$STEP/catchup.yaml" --json
		check_target
		perf_report "$STEP/perf-all.txt"
		return
	fi
	put "$STEP/step.env" profiler pprof
	timed profile "$BIN/profile" -c "$STEP/catchup.yaml" -cpuprofile "$STEP/cpu.pprof"
	check_target
	go tool pprof -top -nodecount=25 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top.txt" 2>/dev/null
	go tool pprof -top -cum -nodecount=40 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top-cum.txt" 2>/dev/null
	go tool pprof -top -nodecount=100000 "$BIN/profile" "$STEP/cpu.pprof" >"$STEP/top-all.txt" 2>/dev/null
}

perf_report() { # perf_report OUT: perf.data summarised by symbol, then removed
	perf report -i "$STEP/perf.data" --stdio --no-children --sort dso,sym --percent-limit 0 >"$1" 2>/dev/null
	rm -f "$STEP/perf.data"
}

# The profile beside the model's: catchup and the model, each under perf
# record in BENCH_PROFILE_ROUNDS interleaved rounds (the order swapped each
# round), into perf-catchup-I.txt and perf-model-I.txt: the report sets
# their CPU a GB side by side, area by area: what catchup does beyond the
# model.
step_profile_beside() {
	local i t order
	put "$STEP/step.env" records "$RECORDS"
	for ((i = 1; i <= BENCH_PROFILE_ROUNDS; i++)); do
		order="model catchup"
		((i % 2)) || order="catchup model"
		for t in $order; do
			fresh_target
			if [[ "$t" == model ]]; then
				timed "profile-model-$i" "${PIN[@]}" perf record -e cpu-clock -F 4999 -o "$STEP/perf.data" -- "$BIN/model" -from "$SRC" -to "$DST" -topic "$TOPIC"
			else
				catchup_config "$STEP/catchup.yaml" "file://$RUN/store-$STEP_N-$i"
				timed "profile-catchup-$i" "${PIN[@]}" perf record -e cpu-clock -F 4999 -o "$STEP/perf.data" -- "$BIN/catchup" run -c "$STEP/catchup.yaml" --json
			fi
			check_count
			perf_report "$STEP/perf-$t-$i.txt"
		done
	done
	put "$STEP/step.env" profile_rounds "$BENCH_PROFILE_ROUNDS"
}

# measure_window NAME PIDS: with the replicator(s) PIDS started, wait for
# the steady-state window (it opens when the target holds BENCH_WINDOW_FROM
# % of the backlog and lasts BENCH_WINDOW_S seconds, or until 90 % of the
# backlog: kafkactl wait), then stop them: records/s and CPU-s are the
# window's, not the whole backlog's.
measure_window() {
	local name="$1" ps="$2" rc=0 p
	put "$STEP/step.env" window_s "$BENCH_WINDOW_S"
	launch "$STEP/wait.json" "$STEP/wait.err" "$BIN/kafkactl" wait -brokers "$DST" -topic "$TOPIC" \
		-want "$((RECORDS * 9 / 10))" -since "$(now_ms)" -timeout "${BENCH_TIMEOUT}s" -pid "$ps" \
		-window-from "$((RECORDS * BENCH_WINDOW_FROM / 100))" -window "${BENCH_WINDOW_S}s"
	await "$LAUNCHED" "$((BENCH_TIMEOUT + 10))" || rc=$?
	for p in ${ps//,/ }; do
		stop_group "$p"
		wait "$p" 2>/dev/null || true
	done
	((rc == 0)) || die "$name did not reach its window's end (exit status $rc): $(cat "$STEP/wait.err")"
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
	# under exactly-once the window counts end offsets, transaction markers
	# included (in MirrorMaker's favour)
	cmdline "$STEP/cmd.txt" "${PIN[@]}" "${JCMD[@]}" org.apache.kafka.connect.mirror.MirrorMaker "$STEP/mm2.properties"
	launch "$STEP/mm2.out" "$STEP/mm2.err" "${PIN[@]}" "${JCMD[@]}" org.apache.kafka.connect.mirror.MirrorMaker "$STEP/mm2.properties"
	measure_window mm2 "$LAUNCHED"
}

step_mm1() {
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	render "$HERE/templates/mm1-consumer.properties" "$STEP/consumer.properties" SRC="$SRC" GROUP="bench-mm1-$STEP_N"
	render "$HERE/templates/mm1-producer.properties" "$STEP/producer.properties" DST="$DST" COMPRESSION="$COMPRESSION"
	jcmd "${HEAP_MM1[*]}" "$MM1_LIBS" "$STEP/mm1.log" INFO
	local -a cmd=("${PIN[@]}" "${JCMD[@]}" kafka.tools.MirrorMaker
		--consumer.config "$STEP/consumer.properties" --producer.config "$STEP/producer.properties"
		--include "$TOPIC" --num.streams "$BENCH_PARTITIONS" --abort.on.send.failure true)
	cmdline "$STEP/cmd.txt" "${cmd[@]}"
	launch "$STEP/mm1.out" "$STEP/mm1.err" "${cmd[@]}"
	measure_window mm1 "$LAUNCHED"
}

# kcat: consumer and producer joined by a FIFO, measured over the window
# (both processes: CPU summed, peak RSS summed).
# Only values cross the pipe, each followed by the byte 0x1e (-D '\x1e'):
# keys, headers, timestamps and the source partition are lost, and a value
# holding that byte would be split in two (neither ProducerPerformance's
# letters nor the JSON orders of the compressed shape hold it).
# With keys (1k-keyed), -K '\x1f' on both ends keeps the key (headers,
# timestamps and partition are still lost); zstd: kcat -P -z zstd.
step_kcat() {
	local c p
	local -a key=() z=()
	[[ "$KEYED" == 1 ]] && key=(-K '\x1f')
	[[ "$COMPRESSION" != none ]] && z=(-z "$COMPRESSION")
	put "$STEP/step.env" records "$RECORDS"
	fresh_target
	mkfifo "$STEP/pipe"
	printf "kcat -C -b %s -t %s -o beginning -e -q -D '%s' %s | kcat -P -b %s -t %s -D '%s' %s %s\n" \
		"$SRC" "$TOPIC" '\x1e' "${key[*]}" "$DST" "$TOPIC" '\x1e' "${key[*]}" "${z[*]}" >>"$STEP/cmd.txt"
	setsid "${PIN[@]}" kcat -P -b "$DST" -t "$TOPIC" -D '\x1e' "${key[@]}" "${z[@]}" <"$STEP/pipe" >"$STEP/producer.out" 2>"$STEP/producer.err" &
	p=$!
	printf '%s\n' "$p" >>"$RUN/pids"
	setsid "${PIN[@]}" kcat -C -b "$SRC" -t "$TOPIC" -o beginning -e -q -D '\x1e' "${key[@]}" >"$STEP/pipe" 2>"$STEP/consumer.err" </dev/null &
	c=$!
	printf '%s\n' "$c" >>"$RUN/pids"
	measure_window kcat "$c,$p"
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

# ---------------------------------------------------------------- the run

# use_topology single|rf3: the target of the steps that follow; KEY is the
# shape as the results name it (SHAPE, or SHAPE-rf3).
use_topology() {
	TOPO="$1"
	case "$TOPO" in
	single) DST="$DST1" DST_PIDS="$DST1_PID" DST_METRICS="$DST1_METRICS" RF=1 KEY="$SHAPE" ;;
	rf3) DST="$DST3" DST_PIDS="$DST3_PIDS" DST_METRICS="$DST3_METRICS" RF=3 KEY="$SHAPE-rf3" ;;
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
		run_step "$KEY" calibrate step_calibrate
		calibrated
		# The fast copiers, interleaved round by round (see the header);
		# the slow peers after them in the first BENCH_PEER_REPEAT rounds.
		for ((ROUND = 1; ROUND <= $(repeat_of "$SHAPE"); ROUND++)); do
			n=${#FAST_TOOLS[@]}
			for ((i = 0; i < n; i++)); do
				run_fast "${FAST_TOOLS[$(((i + ROUND - 1) % n))]}"
			done
			((ROUND <= BENCH_PEER_REPEAT)) || continue
			for peer in "${SLOW_TOOLS[@]}"; do
				every_peer "$SHAPE" || [[ "$peer" == mm2-tuned ]] || continue
				case "$peer" in
				mm2) run_step "$KEY" mm2 step_mm2 ;;
				mm2-tuned) run_step "$KEY" mm2-tuned step_mm2 tuned ;;
				mm2-eos) run_step "$KEY" mm2-eos step_mm2 eos ;;
				mm1) run_step "$KEY" mm1 step_mm1 ;;
				kcat) run_step "$KEY" kcat step_kcat ;;
				esac
			done
		done
		ROUND=1
		if has_tool perf && every_peer "$SHAPE"; then
			run_step "$KEY" producer-perf step_producer_perf
			run_step "$KEY" consumer-perf step_consumer_perf
		fi
		has_tool catchup-dynamodb && every_peer "$SHAPE" && run_step "$KEY" catchup-dynamodb step_catchup dynamodb "$BIN"
		has_tool profile && run_step "$KEY" profile step_profile
		has_tool profile && ((PERF)) && ((BENCH_PROFILE_ROUNDS)) && run_step "$KEY" profile-beside step_profile_beside
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
if [[ -r "$REPORTED" ]]; then put "$META" page_reported_kib_end "$(cat "$REPORTED")"; fi
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
