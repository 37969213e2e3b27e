#!/usr/bin/env bash
# Usage: smoke.sh DATADIR
#
# Checks a broker started by start.sh with Kafka's own command-line tools:
# creates a topic, produces and consumes three keyed records, checks that
# producing to a missing topic fails and does not create it (auto create is
# off), and, when DATADIR has SASL_SSL listeners, that SCRAM-SHA-512 over TLS
# works against the test CA and that the wrong-host listener is rejected by
# hostname verification. Prints "smoke: N passed, 0 failed" or exits 1.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

[[ $# -eq 1 && "$1" != -* ]] || {
	print_usage "${BASH_SOURCE[0]}" >&2
	exit 2
}
data="$(cd "$1" && pwd)"
version="$(cat "$data/version")"
libs="$("$KAFKA_HERE/fetch.sh" "$version" 2>/dev/null)"
# shellcheck source=/dev/null
. "$data/ports"
boot="127.0.0.1:$PLAINTEXT_PORT"
t="smoke-$RANDOM$RANDOM" # a new topic each run: smoke.sh can run again after a restart
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Tools log WARN and above to stderr.
printf 'log4j.rootLogger=WARN, err\nlog4j.appender.err=org.apache.log4j.ConsoleAppender\nlog4j.appender.err.Target=System.err\nlog4j.appender.err.layout=org.apache.log4j.PatternLayout\nlog4j.appender.err.layout.ConversionPattern=%%p %%m (%%c)%%n\n' >"$tmp/log4j.properties"
cat >"$tmp/log4j2.xml" <<'EOF'
<Configuration status="warn"><Appenders><Console name="err" target="SYSTEM_ERR"><PatternLayout pattern="%p %m (%c)%n"/></Console></Appenders>
<Loggers><Root level="WARN"><AppenderRef ref="err"/></Root></Loggers></Configuration>
EOF
tool() {
	"$(java_bin)" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dlog4j.configuration="file:$tmp/log4j.properties" -Dlog4j2.configurationFile="$tmp/log4j2.xml" \
		-cp "$libs/*" "$@"
}
# The console producer moved from core (kafka.tools) to kafka-tools in 4.0.
case "$version" in
[0-3].*) producer=kafka.tools.ConsoleProducer ;;
*) producer=org.apache.kafka.tools.ConsoleProducer ;;
esac

passed=0
ok() {
	passed=$((passed + 1))
	log "ok: $*"
}
fail() {
	log "FAILED: $*"
	log "smoke: $passed passed, 1 failed"
	exit 1
}

tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" --create --topic "$t" \
	--partitions 3 --replication-factor 1 >"$tmp/create.out" 2>&1 || fail "create topic: $(cat "$tmp/create.out")"
ok "created topic $t (3 partitions)"

printf 'k1\tv1\nk2\tv2\nk3\tv3\n' |
	tool "$producer" --bootstrap-server "$boot" --topic "$t" --property parse.key=true \
		--producer-property acks=all >"$tmp/produce.out" 2>&1 || fail "produce: $(cat "$tmp/produce.out")"
ok "produced 3 records"

tool org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$boot" --topic "$t" \
	--from-beginning --max-messages 3 --timeout-ms 20000 --property print.key=true \
	>"$tmp/consume.out" 2>"$tmp/consume.err" || true
got="$(grep $'\t' "$tmp/consume.out" | sort | tr '\t\n' '= ' || true)"
[[ "$got" == "k1=v1 k2=v2 k3=v3 " ]] || fail "consumed '$got': $(cat "$tmp/consume.err")"
ok "consumed the 3 records back"

# Auto create is off: the producer never sees the topic, and it is not created.
printf 'x\n' | tool "$producer" --bootstrap-server "$boot" --topic "$t-missing" \
	--producer-property max.block.ms=3000 >"$tmp/missing.out" 2>&1 || true
grep -Eqi 'not present in metadata|UNKNOWN_TOPIC|TimeoutException' "$tmp/missing.out" ||
	fail "producing to a missing topic did not fail: $(cat "$tmp/missing.out")"
tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" --list >"$tmp/list.out" 2>&1 ||
	fail "list topics: $(cat "$tmp/list.out")"
! grep -qxF "$t-missing" "$tmp/list.out" || fail "$t-missing was auto-created"
ok "producing to a missing topic failed and did not create it"

if [[ -n "${SASL_SSL_PORT:-}" ]]; then
	tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$SASL_SSL_PORT" \
		--command-config "$data/client-sasl-ssl.properties" --list >"$tmp/sasl.out" 2>&1 ||
		fail "SASL_SSL list: $(cat "$tmp/sasl.out")"
	grep -qxF "$t" "$tmp/sasl.out" || fail "SASL_SSL list: $(cat "$tmp/sasl.out")"
	ok "SCRAM-SHA-512 over TLS (CA $data/tls/ca.crt) lists the topics"

	sed 's/password="[^"]*"/password="wrong"/' "$data/client-sasl-ssl.properties" >"$tmp/badpw.properties"
	if tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$SASL_SSL_PORT" \
		--command-config "$tmp/badpw.properties" --list >"$tmp/badpw.out" 2>&1; then
		fail "a wrong SCRAM password was accepted"
	fi
	grep -qi 'authentication failed' "$tmp/badpw.out" || fail "wrong password: $(cat "$tmp/badpw.out")"
	ok "a wrong SCRAM password is refused"

	if tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$WRONG_HOST_PORT" \
		--command-config "$data/client-sasl-ssl.properties" --list >"$tmp/wrong.out" 2>&1; then
		fail "the wrong-host certificate was accepted"
	fi
	grep -Eqi 'SSL handshake failed|No subject alternative' "$tmp/wrong.out" || fail "wrong host: $(cat "$tmp/wrong.out")"
	ok "the wrong-host listener fails hostname verification"
fi

log "smoke: Kafka $version at $boot"
printf 'smoke: %d passed, 0 failed\n' "$passed"
