# shellcheck shell=bash
# Helpers of bench/run.sh. Source it after test/kafka/lib.sh; do not run it.
#
# Every long-running process the benchmark starts goes through `launch`: it
# runs in its own process group (setsid), its id is written to $RUN/pids, and
# `reap` (called after every step and on exit) stops the groups of that list
# that still run, by id, and nothing else.

# launch OUT ERR CMD...: start CMD in the background in a new process group,
# stdin from /dev/null, stdout to OUT, stderr to ERR; sets LAUNCHED to its pid.
launch() {
	local out="$1" err="$2"
	shift 2
	# In a non-interactive shell a background child is no group leader, so
	# setsid does not fork: $! is the pid of CMD (or of /usr/bin/time before it).
	setsid "$@" >"$out" 2>"$err" </dev/null &
	LAUNCHED=$!
	printf '%s\n' "$LAUNCHED" >>"$RUN/pids"
}

# WATCHED: the brokers, as PID:DATADIR words. A broker that exits during a
# measurement (of a full disk, say) would leave the copier retrying until
# BENCH_TIMEOUT: await ends the run instead, with that broker's last errors.
WATCHED=""

# watched_dead: prints the first watched broker that no longer runs, as
# PID:DATADIR, and succeeds; fails when all of them run.
watched_dead() {
	local w
	for w in $WATCHED; do
		kill -0 "${w%%:*}" 2>/dev/null || {
			printf '%s\n' "$w"
			return 0
		}
	done
	return 1
}

# await PID SECONDS: wait for a launched process; after SECONDS stop its
# group and fail. Returns its exit status. Ends the run (die) when a
# watched broker exits meanwhile.
await() {
	local pid="$1" deadline=$(($(date +%s) + $2)) rc=0 n=0 dead
	while kill -0 "$pid" 2>/dev/null && [[ "$(proc_state "$pid")" != Z ]]; do
		if ((++n % 10 == 0)) && dead="$(watched_dead)"; then
			log "broker pid ${dead%%:*} exited during a measurement; the last errors of ${dead#*:}/server.log:"
			grep -h -E 'ERROR|FATAL|Exception' "${dead#*:}/server.log" 2>/dev/null | tail -n 5 >&2
			stop_group "$pid"
			wait "$pid" 2>/dev/null || true
			die "a broker exited (its errors are above; a full disk shows as 'No space left on device': free space where TMPDIR points, or point it elsewhere)"
		fi
		if (($(date +%s) >= deadline)); then
			log "pid $pid still running after $2 s: stopping it"
			stop_group "$pid"
			wait "$pid" 2>/dev/null || true
			return 124
		fi
		sleep 0.1
	done
	wait "$pid" || rc=$?
	return "$rc"
}

proc_state() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1
}

# stop_group PID: SIGTERM to the process group PID leads, SIGKILL after 30 s.
stop_group() {
	local pid="$1" i
	# only if PID still leads its own group (it is ours, not a recycled pid)
	[[ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f3)" == "$pid" ]] || return 0
	kill -TERM -- "-$pid" 2>/dev/null || return 0
	for ((i = 0; i < 300; i++)); do
		kill -0 -- "-$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	log "process group $pid still running after 30 s: SIGKILL"
	kill -KILL -- "-$pid" 2>/dev/null || true
}

# reap: stop every launched process group that still runs.
reap() {
	local pid
	[[ -f "$RUN/pids" ]] || return 0
	while read -r pid; do
		[[ -n "$pid" ]] && stop_group "$pid"
	done <"$RUN/pids"
	: >"$RUN/pids"
}

# proc_cpu PID: user+sys CPU seconds of PID (all threads), 2 decimals.
proc_cpu() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ printf "%.2f\n", ($12 + $13) / 100 }'
}

load1() {
	cut -d' ' -f1 /proc/loadavg
}

# render TEMPLATE OUT KEY=VALUE...: copy TEMPLATE to OUT replacing each @KEY@.
render() {
	local tmpl="$1" out="$2" kv k v
	shift 2
	cp "$tmpl" "$out.tmp"
	for kv in "$@"; do
		k="${kv%%=*}" v="${kv#*=}"
		v="${v//\\/\\\\}" v="${v//|/\\|}" v="${v//&/\\&}"
		sed -i "s|@$k@|$v|g" "$out.tmp"
	done
	mv "$out.tmp" "$out"
}

# put FILE KEY VALUE: append KEY=VALUE to a step's or the run's metadata.
put() {
	printf '%s=%s\n' "$2" "$3" >>"$1"
}

# cmdline FILE CMD...: record the exact command line (shell-quoted).
cmdline() {
	local f="$1"
	shift
	printf '%q ' "$@" >>"$f"
	printf '\n' >>"$f"
}

# records_of GB PER_GB: GB (decimal allowed) times PER_GB, as an integer.
records_of() {
	awk -v g="$1" -v n="$2" 'BEGIN { printf "%d\n", g * n + 0.5 }'
}

# procs_cpu "PID PID...": the sum of proc_cpu over the PIDs of the list.
procs_cpu() {
	local p
	for p in $1; do proc_cpu "$p"; done | awk '{ s += $1 } END { printf "%.2f\n", s }'
}
