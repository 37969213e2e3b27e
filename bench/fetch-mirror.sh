#!/usr/bin/env bash
# Usage: fetch-mirror.sh [VERSION]
#
# Downloads the class path of MirrorMaker 2 (org.apache.kafka:connect-mirror
# VERSION and its runtime dependencies, log4j2 for logging) from Maven Central
# with Maven and bench/pom.xml into
#   ${BENCH_CACHE:-bench/.cache}/connect-mirror-VERSION/libs
# and prints that folder on stdout. Does nothing when it is already complete
# (marker file .complete), as test/kafka/fetch.sh does for the broker.
# Default VERSION: $BENCH_MM2_VERSION, else 4.3.1 (the newest connect-mirror on
# Maven Central when this was written: 4.4.0 has the broker but not it).

# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=../test/kafka/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../test/kafka/lib.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

case "${1:-}" in
-h | --help)
	print_usage "${BASH_SOURCE[0]}"
	exit 0
	;;
esac

version="${1:-${BENCH_MM2_VERSION:-4.3.1}}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "not a Kafka version: $version"
cache="${BENCH_CACHE:-$here/.cache}"
mkdir -p "$cache"
dir="$(cd "$cache" && pwd)/connect-mirror-$version"
marker="$dir/.complete"
if [[ ! -f "$marker" ]]; then
	command -v mvn >/dev/null || die "mvn not found (Maven 3.6+ is needed)"
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	if [[ ! -f "$marker" ]]; then
		t0="$(now_ms)"
		rm -rf "$dir/libs" "$dir/libs.tmp"
		if ! mvn -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
			-Dkafka.version="$version" -DoutputDirectory="$dir/libs.tmp" >"$dir/mvn.log" 2>&1; then
			grep -E 'ERROR|BUILD' "$dir/mvn.log" | head -n 20 >&2 || true
			rm -rf "$dir/libs.tmp"
			die "mvn failed for connect-mirror $version (is that version on Maven Central?); see $dir/mvn.log"
		fi
		[[ -f "$dir/libs.tmp/connect-mirror-$version.jar" ]] || die "connect-mirror-$version.jar missing after mvn"
		mv "$dir/libs.tmp" "$dir/libs"
		printf 'version=%s\n' "$version" >"$marker"
		log "connect-mirror $version ($(find "$dir/libs" -name '*.jar' | wc -l) jars, $(du -sh "$dir/libs" | cut -f1)) fetched in $((($(now_ms) - t0) / 1000))s"
	fi
	exec 9>&-
else
	log "connect-mirror $version already in the cache"
fi
printf '%s\n' "$dir/libs"
