# shellcheck shell=bash
# Helpers shared by fetch.sh, start.sh, stop.sh and cluster.sh. Source it; do not run it.

KAFKA_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Newest versions served when this was written: 4.4.0 (default) and 3.9.2.
KAFKA_DEFAULT_VERSION="4.4.0"

die() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

kafka_version() {
	printf '%s\n' "${CATCHUP_KAFKA_VERSION:-$KAFKA_DEFAULT_VERSION}"
}

kafka_cache() {
	local c="${CATCHUP_KAFKA_CACHE:-$KAFKA_HERE/.cache}"
	mkdir -p "$c"
	(cd "$c" && pwd)
}

# java binary: $JAVA_HOME/bin/java when set, else the one on PATH.
java_bin() {
	if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
		printf '%s\n' "$JAVA_HOME/bin/java"
	else
		command -v java || die "java not found (Java 17+ is needed)"
	fi
}

# now_ms: wall clock in milliseconds.
now_ms() {
	date +%s%3N
}

# free_ports N: prints N distinct loopback TCP ports, space separated, that
# are free right now. Ports are drawn at random BELOW the kernel's ephemeral
# range and bind-tested, so that no outgoing connection can grab one of them
# while a broker is down (restart reuses the same ports).
free_ports() {
	command -v python3 >/dev/null || die "python3 is needed to pick free ports"
	python3 - "$1" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
except OSError:
    low = 32768
hi = max(low - 1, 12000)
lo = 10000
picked = []
socks = []
for _ in range(5000):
    if len(picked) == n:
        break
    p = random.randint(lo, hi)
    if p in picked:
        continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))  # no SO_REUSEADDR: also refuses TIME_WAIT ports
    except OSError:
        s.close()
        continue
    socks.append(s)
    picked.append(p)
for s in socks:
    s.close()
if len(picked) != n:
    sys.exit("no free ports found")
print(" ".join(map(str, picked)))
PY
}

# new_cluster_id: a random Kafka Uuid in its base64url form (22 chars).
new_cluster_id() {
	python3 -c '
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):
        print(s)
        break'
}

# broker_pid DATADIR: prints the pid of the broker of DATADIR if it runs (and
# really is that broker, not a recycled pid), else returns 1.
broker_pid() {
	local data="$1" pid state
	[[ -f "$data/pid" ]] || return 1
	pid="$(cat "$data/pid")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	[[ -r "/proc/$pid/cmdline" ]] || return 1
	# a zombie (killed, not yet reaped) is as good as gone
	state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
	[[ "$state" != "Z" && -n "$state" ]] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF "$data/server.properties" || return 1
	printf '%s\n' "$pid"
}

# print_usage FILE: the comment block at the top of FILE, without the '#'.
print_usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"
}

# maven_fetch WHAT DIR POM JAR [mvn args...]: the runtime class path of POM
# (mvn dependency:copy-dependencies) into DIR/libs, once: a lock serialises
# concurrent fetches, the marker DIR/.complete says it is done, and JAR must
# be among the jars. Prints DIR/libs; progress goes to stderr.
maven_fetch() {
	local what="$1" dir="$2" pom="$3" jar="$4" t0
	shift 4
	if [[ -f "$dir/.complete" ]]; then
		log "$what already in the cache"
		printf '%s\n' "$dir/libs"
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found (Maven 3.6+ is needed)"
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	if [[ ! -f "$dir/.complete" ]]; then # another fetch may have finished while we waited
		t0="$(now_ms)"
		rm -rf "$dir/libs" "$dir/libs.tmp"
		if ! mvn -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies "$@" \
			-DoutputDirectory="$dir/libs.tmp" >"$dir/mvn.log" 2>&1; then
			grep -E 'ERROR|BUILD' "$dir/mvn.log" | head -n 20 >&2 || true
			rm -rf "$dir/libs.tmp"
			die "mvn failed for $what (is that version on Maven Central?); see $dir/mvn.log"
		fi
		[[ -f "$dir/libs.tmp/$jar" ]] || die "$jar missing after mvn"
		mv "$dir/libs.tmp" "$dir/libs"
		printf '%s\n' "$what" >"$dir/.complete"
		log "$what ($(find "$dir/libs" -name '*.jar' | wc -l) jars, $(du -sh "$dir/libs" | cut -f1)) fetched in $((($(now_ms) - t0) / 1000))s"
	fi
	exec 9>&-
	printf '%s\n' "$dir/libs"
}
