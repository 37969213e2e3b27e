#!/usr/bin/env bash
# Usage: bench/gobench.sh [BASE]        (make bench-go [BASE=rev])
#
# The Go benchmarks of catchup's hot path, without real brokers: decoding a
# fetch response and encoding a produce request with the provenance header
# (internal/kafkago/wire), provenance parsing (internal/catchup), loop filtering
# (internal/replicate), and whole copies between kfake clusters next to
# produce-only and fetch-only (internal/pipeline). Each benchmark runs
# GOBENCH_COUNT times (default 6) and benchstat summarizes them.
#
# With BASE, a git revision, the same packages are also built from BASE
# (git archive into a temporary folder), and the two builds run in turns,
# base then this, GOBENCH_COUNT times, so that the machine's load drifts hit
# both alike; benchstat then prints the differences and their p-values.
# Benchmarks missing at BASE are shown for this tree only.
#
# Environment: GOBENCH_COUNT [6], GOBENCH_FILTER (a -bench regexp) [.],
# GOBENCH_OUT (folder for the raw outputs) [a temporary folder, printed].
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"

case "${1:-}" in
-h | --help)
	sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit 0
	;;
esac
BASE="${1:-}"
COUNT="${GOBENCH_COUNT:-6}"
FILTER="${GOBENCH_FILTER:-.}"
OUT="${GOBENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/catchup-gobench.XXXXXX")}"
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# internal/kafkago held the codec benchmarks before internal/kafkago/wire did:
# kept for a BASE from before the move.
PKGS=(internal/kafkago internal/kafkago/wire internal/catchup internal/replicate internal/pipeline)
mkdir -p "$OUT"

# build DIR SRC: test binaries of PKGS from the tree SRC into DIR.
build() {
	local dir="$1" src="$2" p
	mkdir -p "$dir"
	for p in "${PKGS[@]}"; do
		[[ -d "$src/$p" ]] || continue # not at BASE yet
		(cd "$src" && go test -c -o "$dir/$(basename "$p").test" "./$p")
	done
}

# run DIR FILE: every benchmark of DIR's binaries once, appended to FILE.
# Each binary runs in its package's folder of this tree, as go test would.
run() {
	local dir="$1" file="$2" p bin time
	for p in "${PKGS[@]}"; do
		bin="$dir/$(basename "$p").test"
		[[ -x "$bin" ]] || continue
		time=1s
		[[ "$p" == internal/pipeline ]] && time=3x # a copy of 32 MiB is one op
		(cd "$REPO/$p" && "$bin" -test.run '^$' -test.bench "$FILTER" -test.benchmem \
			-test.benchtime "$time" -test.count 1) >>"$file"
	done
}

build "$OUT/this" "$REPO"
if [[ -n "$BASE" ]]; then
	rev="$(git -C "$REPO" rev-parse --verify --short "$BASE^{commit}")" ||
		{ echo "gobench: $BASE is not a revision of this repository" >&2; exit 2; }
	src="$(mktemp -d "${TMPDIR:-/tmp}/catchup-gobench-src.XXXXXX")"
	trap 'rm -rf "$src"' EXIT
	git -C "$REPO" archive "$rev" | tar -x -C "$src"
	build "$OUT/base" "$src"
fi
for i in $(seq "$COUNT"); do
	echo "gobench: round $i of $COUNT" >&2
	if [[ -n "$BASE" ]]; then run "$OUT/base" "$OUT/base.txt"; fi
	run "$OUT/this" "$OUT/this.txt"
done
echo "gobench: raw outputs in $OUT" >&2
if [[ -n "$BASE" ]]; then
	# -ignore pkg: a benchmark that moved to another package is compared
	# with itself (benchmark names are unique across PKGS).
	(cd "$REPO" && go run "$BENCHSTAT" -ignore pkg "base=$OUT/base.txt" "this=$OUT/this.txt")
else
	(cd "$REPO" && go run "$BENCHSTAT" "$OUT/this.txt")
fi
