#!/usr/bin/env bash
# Usage: fetch.sh [VERSION]
#
# Downloads the class path of Apache Kafka VERSION (default: $CATCHUP_KAFKA_VERSION,
# else the newest 4.x this was written for) from Maven Central with Maven into
#   ${CATCHUP_KAFKA_CACHE:-test/kafka/.cache}/VERSION/libs
# and prints that folder on stdout (timings go to stderr). Does nothing when the
# folder is already complete (marker file VERSION/.complete). Safe to run
# concurrently: a lock serialises fetches of the same version.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

case "${1:-}" in
-h | --help)
	print_usage "${BASH_SOURCE[0]}"
	exit 0
	;;
esac

version="${1:-$(kafka_version)}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([.-][A-Za-z0-9.-]+)?$ ]] || die "not a Kafka version: $version"
cache="$(kafka_cache)"
dir="$cache/$version"
marker="$dir/.complete"

if [[ ! -f "$marker" ]]; then
	command -v mvn >/dev/null || die "mvn not found (Maven 3.6+ is needed)"
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	if [[ ! -f "$marker" ]]; then # another fetch may have finished while we waited
		# Kafka 3.x logs through log4j 1 (reload4j), 4.x through log4j2.
		case "$version" in
		[0-3].*) profile=reload4j ;;
		*) profile=log4j2 ;;
		esac
		t0="$(now_ms)"
		rm -rf "$dir/libs" "$dir/libs.tmp" "$dir/broker.jsa"
		if ! mvn -B -Dstyle.color=never -f "$KAFKA_HERE/pom.xml" \
			dependency:copy-dependencies -P "$profile" \
			-Dkafka.version="$version" -DoutputDirectory="$dir/libs.tmp" >"$dir/mvn.log" 2>&1; then
			grep -E 'ERROR|BUILD' "$dir/mvn.log" | head -n 20 >&2 || true
			rm -rf "$dir/libs.tmp"
			die "mvn failed for Kafka $version (is that version on Maven Central?); see $dir/mvn.log"
		fi
		[[ -f "$dir/libs.tmp/kafka_2.13-$version.jar" ]] || die "kafka_2.13-$version.jar missing after mvn"
		mv "$dir/libs.tmp" "$dir/libs"
		printf 'version=%s\nlogging=%s\n' "$version" "$profile" >"$marker"
		t1="$(now_ms)"
		log "Kafka $version ($profile, $(find "$dir/libs" -name '*.jar' | wc -l) jars, $(du -sh "$dir/libs" | cut -f1)) fetched in $(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s"
	fi
	exec 9>&-
else
	log "Kafka $version already in the cache"
fi
printf '%s\n' "$dir/libs"
