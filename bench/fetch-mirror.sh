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
maven_fetch "connect-mirror $version" "$(cd "$cache" && pwd)/connect-mirror-$version" "$here/pom.xml" \
	"connect-mirror-$version.jar" -Dkafka.version="$version"
