#!/usr/bin/env bash
# Usage: start.sh DATADIR            format DATADIR and start a new single-node cluster in it
#        start.sh --restart DATADIR  start the broker of DATADIR again (same ports, same data)
#
# Starts one real Kafka broker in KRaft mode (combined broker+controller, node.id=1),
# listening on free 127.0.0.1 ports only, and leaves it running in the background.
# On success prints one line on stdout:
#   BROKERS=127.0.0.1:P PID=<pid> DATA=<dir> [METRICS=http://127.0.0.1:M/metrics] [SASL_SSL=127.0.0.1:S CA=<ca.crt> SASL_SSL_WRONG_HOST=127.0.0.1:W OAUTH=127.0.0.1:O [GSSAPI=127.0.0.1:G]]
# Progress and errors go to stderr; on failure the tail of the broker log is shown.
#
# Environment:
#   CATCHUP_KAFKA_VERSION        Kafka version for a new DATADIR (default 4.4.0); --restart
#                                uses the version DATADIR was made with
#   CATCHUP_KAFKA_CACHE          where fetch.sh keeps the jars (default test/kafka/.cache)
#   CATCHUP_KAFKA_SASL_SSL=1     also open SASL_SSL listeners (new DATADIR only), see README
#   CATCHUP_KAFKA_KDC=DIR        with CATCHUP_KAFKA_SASL_SSL=1, also a GSSAPI listener (SASL_PLAINTEXT)
#                                whose keys are those of the KDC kdc.sh started in DIR
#   CATCHUP_KAFKA_EXTRA_CONFIG   lines appended to server.properties (they override ours)
#   CATCHUP_KAFKA_HEAP_OPTS      default "-Xms256m -Xmx512m"
#   CATCHUP_KAFKA_JVM_OPTS       default "-XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError"
#   CATCHUP_KAFKA_START_TIMEOUT  seconds to wait for "Kafka Server started" (default 90)
#   CATCHUP_KAFKA_METRICS=1      also serve the broker's request and byte counters over HTTP
#                                (the Prometheus JMX exporter's Java agent, jmx-exporter.yaml;
#                                new DATADIR, not a controller), printed as METRICS=http://...
#
# A node of a multi-node cluster (cluster.sh's replicated target; new DATADIR only):
#   CATCHUP_KAFKA_ROLE           combined (default, the single-node cluster above),
#                                controller (a dedicated KRaft controller: one port,
#                                printed as CONTROLLER=127.0.0.1:C, no BROKERS) or
#                                broker (a broker of the quorum in CATCHUP_KAFKA_VOTERS)
#   CATCHUP_KAFKA_NODE_ID        node.id (default 1)
#   CATCHUP_KAFKA_VOTERS         controller.quorum.voters, for role broker (id@host:port)
#   CATCHUP_KAFKA_CLUSTER_ID     the cluster id every node is formatted with
#   CATCHUP_KAFKA_REPLICAS       replication factor of the internal topics and the
#                                default of new topics (default 1); min.insync.replicas
#                                is one less (at least 1); unclean election stays off
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
	print_usage "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

restart=0
data=""
while (($#)); do
	case "$1" in
	--restart) restart=1 ;;
	-h | --help) usage 0 ;;
	-*) usage ;;
	*)
		[[ -z "$data" ]] || usage
		data="$1"
		;;
	esac
	shift
done
[[ -n "$data" ]] || usage
mkdir -p "$data"
data="$(cd "$data" && pwd)"
timeout_s="${CATCHUP_KAFKA_START_TIMEOUT:-90}"
role="${CATCHUP_KAFKA_ROLE:-combined}"
node_id="${CATCHUP_KAFKA_NODE_ID:-1}"
replicas="${CATCHUP_KAFKA_REPLICAS:-1}"
START_T0="$(now_ms)"

# ---------------------------------------------------------------- certificates

# make_cert NAME CN SAN: a key and a certificate signed by the test CA, and a
# PKCS12 keystore (key + chain) for the broker.
make_cert() {
	local name="$1" cn="$2" san="$3"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$data/tls/$name.key" -out "$data/tls/$name.csr" -subj "/CN=$cn" 2>/dev/null
	printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
		"$san" >"$data/tls/$name.ext"
	openssl x509 -req -in "$data/tls/$name.csr" -CA "$data/tls/ca.crt" -CAkey "$data/tls/ca.key" \
		-CAcreateserial -days 3650 -sha256 -extfile "$data/tls/$name.ext" -out "$data/tls/$name.crt" 2>/dev/null
	openssl pkcs12 -export -name "$name" -in "$data/tls/$name.crt" -inkey "$data/tls/$name.key" \
		-certfile "$data/tls/ca.crt" -out "$data/tls/$name.p12" -passout "file:$data/tls/keystore-password"
	rm -f "$data/tls/$name.csr" "$data/tls/$name.ext"
}

make_tls() {
	command -v openssl >/dev/null || die "openssl is needed for CATCHUP_KAFKA_SASL_SSL=1"
	mkdir -p "$data/tls"
	openssl rand -hex 16 >"$data/tls/keystore-password"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$data/tls/ca.key" -out "$data/tls/ca.crt" -days 3650 -sha256 \
		-subj "/CN=catchup test CA $(basename "$data")" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	make_cert broker localhost "IP:127.0.0.1,DNS:localhost"
	make_cert wrong-host wrong.example "DNS:wrong.example"
	openssl rand -hex 16 >"$data/scram-password"
	printf 'catchup\n' >"$data/scram-user"
	# for the Kafka command-line tools
	cat >"$data/client-sasl-ssl.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="catchup" password="$(cat "$data/scram-password")";
ssl.truststore.type=PEM
ssl.truststore.location=$data/tls/ca.crt
EOF
}

# ---------------------------------------------------------------- configuration

write_config() {
	local listeners advertised protomap jaas pw kspw roles voters rf isr
	roles=broker,controller
	voters="$node_id@127.0.0.1:$CONTROLLER_PORT"
	listeners="PLAINTEXT://127.0.0.1:$PLAINTEXT_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT"
	advertised="PLAINTEXT://127.0.0.1:$PLAINTEXT_PORT"
	protomap="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
	case "$role" in
	controller)
		roles=controller
		listeners="CONTROLLER://127.0.0.1:$CONTROLLER_PORT"
		advertised=""
		;;
	broker)
		roles=broker
		voters="$CATCHUP_KAFKA_VOTERS"
		listeners="PLAINTEXT://127.0.0.1:$PLAINTEXT_PORT"
		;;
	esac
	rf="$replicas"
	isr=$((rf > 1 ? rf - 1 : 1))
	if [[ -n "${SASL_SSL_PORT:-}" ]]; then
		listeners+=",SASL_SSL://127.0.0.1:$SASL_SSL_PORT,WRONGHOST://127.0.0.1:$WRONG_HOST_PORT"
		advertised+=",SASL_SSL://127.0.0.1:$SASL_SSL_PORT,WRONGHOST://127.0.0.1:$WRONG_HOST_PORT"
		protomap+=",SASL_SSL:SASL_SSL,WRONGHOST:SASL_SSL"
		listeners+=",OAUTH://127.0.0.1:$OAUTH_PORT"
		advertised+=",OAUTH://127.0.0.1:$OAUTH_PORT"
		protomap+=",OAUTH:SASL_PLAINTEXT"
	fi
	if [[ -n "${GSSAPI_PORT:-}" ]]; then
		listeners+=",GSSAPI://127.0.0.1:$GSSAPI_PORT"
		advertised+=",GSSAPI://127.0.0.1:$GSSAPI_PORT"
		protomap+=",GSSAPI:SASL_PLAINTEXT"
	fi
	cat >"$data/server.properties" <<EOF
# written by catchup test/kafka/start.sh
process.roles=$roles
node.id=$node_id
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
listeners=$listeners
${advertised:+advertised.listeners=$advertised}
${advertised:+inter.broker.listener.name=PLAINTEXT}
listener.security.protocol.map=$protomap
log.dirs=$data/logs

auto.create.topics.enable=false
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
unclean.leader.election.enable=false
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
delete.topic.enable=true
# the cleaner's 128 MiB default map is most of a small heap
log.cleaner.dedupe.buffer.size=16777216
# after a crash (stop.sh --kill) the restarted broker cannot register until the
# controller expires the old session: 9 s by default
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000
EOF
	if [[ -n "${SASL_SSL_PORT:-}" ]]; then
		pw="$(cat "$data/scram-password")"
		kspw="$(cat "$data/tls/keystore-password")"
		for l in sasl_ssl wronghost; do
			if [[ $l == sasl_ssl ]]; then ks=broker; else ks=wrong-host; fi
			jaas="org.apache.kafka.common.security.scram.ScramLoginModule required;"
			cat >>"$data/server.properties" <<EOF

listener.name.$l.ssl.keystore.type=PKCS12
listener.name.$l.ssl.keystore.location=$data/tls/$ks.p12
listener.name.$l.ssl.keystore.password=$kspw
listener.name.$l.ssl.key.password=$kspw
listener.name.$l.ssl.client.auth=none
listener.name.$l.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.$l.scram-sha-512.sasl.jaas.config=$jaas
listener.name.$l.scram-sha-256.sasl.jaas.config=$jaas
listener.name.$l.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_catchup="$pw";
EOF
		done
		# Kafka's KRaft authorizer, open to every principal on what has no
		# ACL, so that only the ACLs a test creates are enforced (for
		# internal/brokers TestSyncACLsStandardAuthorizer, which copies ACLs and
		# checks them with the authorizer on); the brokers and the controller
		# talk over PLAINTEXT and CONTROLLER as User:ANONYMOUS, a super user.
		# The SASL users (catchup, an OAUTHBEARER sub) are not super users.
		cat >>"$data/server.properties" <<EOF

authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=true
super.users=User:ANONYMOUS
EOF
		# OAUTHBEARER over SASL_PLAINTEXT, validated by Kafka's own
		# unsecured-JWT validator: it accepts any unsigned (alg "none")
		# token with a sub and an unexpired exp. For tests only.
		cat >>"$data/server.properties" <<EOF

listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler
EOF
	fi
	if [[ -n "${GSSAPI_PORT:-}" ]]; then
		# GSSAPI (Kerberos) over SASL_PLAINTEXT: the service principal
		# kafka/127.0.0.1, the advertised host, with its keys from the
		# keytab of kdc.sh; isInitiator=false: the broker only accepts,
		# so it starts (and restarts) without asking the KDC anything.
		cat >>"$data/server.properties" <<EOF

sasl.kerberos.service.name=kafka
listener.name.gssapi.sasl.enabled.mechanisms=GSSAPI
listener.name.gssapi.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true isInitiator=false keyTab="$data/kerberos/broker.keytab" principal="kafka/127.0.0.1@$(cat "$data/kerberos/realm")";
EOF
	fi
	if [[ -n "${CATCHUP_KAFKA_EXTRA_CONFIG:-}" ]]; then
		printf '\n# CATCHUP_KAFKA_EXTRA_CONFIG\n%s\n' "$CATCHUP_KAFKA_EXTRA_CONFIG" >>"$data/server.properties"
	fi

	# Logging: Kafka 4.x uses log4j2, 3.x log4j 1 (reload4j). Both write server.log.
	cat >"$data/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="warn">
  <Appenders>
    <File name="file" fileName="${sys:kafka.logs.dir}/server.log" append="true">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
    <Logger name="kafka.request.logger" level="WARN"/>
  </Loggers>
</Configuration>
EOF
	cat >"$data/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
EOF
}

write_ports() {
	{
		printf 'PLAINTEXT_PORT=%s\nCONTROLLER_PORT=%s\n' "$PLAINTEXT_PORT" "$CONTROLLER_PORT"
		printf 'ROLE=%s\n' "$role"
		if [[ -n "${SASL_SSL_PORT:-}" ]]; then
			printf 'SASL_SSL_PORT=%s\nWRONG_HOST_PORT=%s\nOAUTH_PORT=%s\n' "$SASL_SSL_PORT" "$WRONG_HOST_PORT" "$OAUTH_PORT"
		fi
		if [[ -n "${GSSAPI_PORT:-}" ]]; then
			printf 'GSSAPI_PORT=%s\n' "$GSSAPI_PORT"
		fi
		if [[ -n "${METRICS_PORT:-}" ]]; then
			printf 'METRICS_PORT=%s\n' "$METRICS_PORT"
		fi
	} >"$data/ports"
}

read_ports() {
	PLAINTEXT_PORT="" CONTROLLER_PORT="" SASL_SSL_PORT="" WRONG_HOST_PORT="" OAUTH_PORT="" GSSAPI_PORT="" METRICS_PORT=""
	local k v
	while IFS='=' read -r k v; do
		case "$k" in
		PLAINTEXT_PORT) PLAINTEXT_PORT="$v" ;;
		CONTROLLER_PORT) CONTROLLER_PORT="$v" ;;
		SASL_SSL_PORT) SASL_SSL_PORT="$v" ;;
		WRONG_HOST_PORT) WRONG_HOST_PORT="$v" ;;
		OAUTH_PORT) OAUTH_PORT="$v" ;;
		GSSAPI_PORT) GSSAPI_PORT="$v" ;;
		METRICS_PORT) METRICS_PORT="$v" ;;
		ROLE) role="$v" ;;
		esac
	done <"$data/ports"
	[[ -n "$PLAINTEXT_PORT" || -n "$CONTROLLER_PORT" ]] || die "$data/ports is incomplete"
}

# ---------------------------------------------------------------- running

# Class data sharing: the first broker of a version that finds no archive in
# the cache dumps its loaded classes there when it exits (-XX:ArchiveClassesAtExit,
# once; it holds fd 8, a lock, for its whole life so nobody reads a half-written
# archive); later JVMs map it (-XX:SharedArchiveFile), which halves their startup.
# A stale or foreign archive is ignored by the JVM (-Xshare:auto). CATCHUP_KAFKA_CDS=0: off.
cds_opts() {
	local jsa
	jsa="$(dirname "$libs")/broker.jsa"
	CDS_OPTS=()
	[[ "${CATCHUP_KAFKA_CDS:-1}" == 1 ]] || return 0
	if [[ -s "$jsa" ]]; then
		if flock -n "$jsa.lock" true; then
			CDS_OPTS=(-XX:SharedArchiveFile="$jsa" -Xshare:auto)
		fi
	elif [[ "$1" == broker ]]; then
		exec 8>"$jsa.lock"
		if flock -n 8; then
			CDS_OPTS=(-XX:ArchiveClassesAtExit="$jsa")
		else
			exec 8>&-
		fi
	fi
}

# metrics_agent: the Prometheus JMX exporter's Java agent jar, of the version
# jmx-exporter.pom.xml names, fetched once from Maven Central into the jar
# cache (for CATCHUP_KAFKA_METRICS=1).
metrics_agent() {
	local pom="$KAFKA_HERE/jmx-exporter.pom.xml" v libs
	v="$(sed -n 's:.*<jmx.exporter.version>\(.*\)</jmx.exporter.version>.*:\1:p' "$pom")"
	[[ -n "$v" ]] || die "$pom names no jmx.exporter.version"
	libs="$(maven_fetch "Prometheus JMX exporter $v" "$(kafka_cache)/jmx-exporter-$v" \
		"$pom" "jmx_prometheus_javaagent-$v.jar" -DexcludeTransitive=true)" || return 1
	printf '%s\n' "$libs/jmx_prometheus_javaagent-$v.jar"
}

# java_cmd broker|tool: sets JAVA_CMD, the java command line before the main class.
java_cmd() {
	local agent
	local -a heap jvm
	read -r -a heap <<<"${CATCHUP_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
	read -r -a jvm <<<"${CATCHUP_KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError}"
	cds_opts "$1"
	JAVA_CMD=("$(java_bin)" "${heap[@]}" "${jvm[@]}" "${CDS_OPTS[@]}" -Djava.awt.headless=true
		-Dkafka.logs.dir="$data")
	if [[ -f "$data/kerberos/krb5.conf" ]]; then
		JAVA_CMD+=(-Djava.security.krb5.conf="$data/kerberos/krb5.conf")
	fi
	if [[ "$1" == broker && -n "${METRICS_PORT:-}" ]]; then
		agent="$(metrics_agent)" || die "could not fetch the Prometheus JMX exporter for CATCHUP_KAFKA_METRICS=1"
		JAVA_CMD+=(-javaagent:"$agent=127.0.0.1:$METRICS_PORT:$KAFKA_HERE/jmx-exporter.yaml")
	fi
	if compgen -G "$libs/log4j-core-*.jar" >/dev/null; then
		JAVA_CMD+=(-Dlog4j2.configurationFile="$data/log4j2.xml")
	else
		JAVA_CMD+=(-Dlog4j.configuration="file:$data/log4j.properties")
	fi
	JAVA_CMD+=(-cp "$libs/*")
}

format_storage() {
	local cid out
	local -a scram=()
	cid="${CATCHUP_KAFKA_CLUSTER_ID:-$(new_cluster_id)}"
	if [[ -n "${SASL_SSL_PORT:-}" ]]; then
		local pw
		pw="$(cat "$data/scram-password")"
		scram=(--add-scram "SCRAM-SHA-512=[name=catchup,password=$pw]"
			--add-scram "SCRAM-SHA-256=[name=catchup,password=$pw]")
	fi
	java_cmd tool
	FORMAT_T0="$(now_ms)"
	if ! out="$("${JAVA_CMD[@]}" kafka.tools.StorageTool format --config "$data/server.properties" \
		--cluster-id "$cid" "${scram[@]}" 2>&1)"; then
		printf '%s\n' "$out" >&2
		die "kafka-storage format failed"
	fi
	printf '%s\n' "$cid" >"$data/cluster-id"
	FORMAT_MS=$(($(now_ms) - FORMAT_T0))
}

# launch: starts the broker in its own session, detached from our stdio, and
# waits for "Kafka Server started" in the part of server.log it writes.
# Returns 0 when ready, 3 when a port was taken (fresh start retries), else dies.
launch() {
	local off=0 outoff=0 pid="" t0 deadline
	[[ -f "$data/server.log" ]] && off="$(stat -c %s "$data/server.log")"
	[[ -f "$data/stdout.log" ]] && outoff="$(stat -c %s "$data/stdout.log")"
	rm -f "$data/pid"
	java_cmd broker
	printf '\n==== %s start (kafka %s)\n' "$(date -Is)" "$version" >>"$data/stdout.log"
	t0="$(now_ms)"
	# shellcheck disable=SC2016 # $$ and $@ are for the inner shell
	setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' \
		"$data/pid" "${JAVA_CMD[@]}" kafka.Kafka "$data/server.properties" \
		>>"$data/stdout.log" 2>&1 </dev/null &
	exec 8>&- # the broker keeps the CDS dump lock, if it took it
	deadline=$((t0 + timeout_s * 1000))
	while (($(now_ms) < deadline)); do
		[[ -z "$pid" && -f "$data/pid" ]] && pid="$(cat "$data/pid")"
		if [[ -f "$data/server.log" ]] &&
			tail -c "+$((off + 1))" "$data/server.log" | grep -q 'Kafka Server started'; then
			STARTED_MS=$(($(now_ms) - t0))
			return 0
		fi
		if [[ -n "$pid" ]] && ! broker_pid "$data" >/dev/null; then
			# (grep reads all: with -q it could stop first, and tail's SIGPIPE fail the pipe)
			if tail -c "+$((off + 1))" "$data/server.log" 2>/dev/null | grep 'Address already in use' >/dev/null ||
				tail -c "+$((outoff + 1))" "$data/stdout.log" 2>/dev/null | grep 'Address already in use' >/dev/null; then
				return 3
			fi
			show_failure "the broker exited during startup"
		fi
		sleep 0.2
	done
	[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null
	show_failure "the broker was not ready within ${timeout_s}s (killed it)"
}

show_failure() {
	{
		echo "---- tail of $data/server.log"
		tail -n 40 "$data/server.log" 2>/dev/null || true
		echo "---- tail of $data/stdout.log"
		tail -n 20 "$data/stdout.log" 2>/dev/null || true
		echo "----"
	} >&2
	die "$1"
}

# ---------------------------------------------------------------- main

if ((restart)); then
	[[ -f "$data/ports" && -f "$data/version" && -f "$data/server.properties" ]] ||
		die "$data was not made by start.sh (no ports/version/server.properties)"
	if pid="$(broker_pid "$data")"; then
		die "the broker of $data is already running (pid $pid)"
	fi
	version="$(cat "$data/version")"
	libs="$(CATCHUP_KAFKA_VERSION="$version" "$KAFKA_HERE/fetch.sh" "$version")"
	read_ports
	launch || die "port ${PLAINTEXT_PORT:-}/${CONTROLLER_PORT:-}${METRICS_PORT:+/$METRICS_PORT (metrics)} is taken by another process; cannot restart on the same ports"
else
	[[ ! -e "$data/ports" && ! -e "$data/logs" ]] ||
		die "$data already holds a cluster: use --restart, or remove it"
	case "$role" in
	combined | controller) ;;
	broker) [[ -n "${CATCHUP_KAFKA_VOTERS:-}" ]] || die "CATCHUP_KAFKA_ROLE=broker needs CATCHUP_KAFKA_VOTERS" ;;
	*) die "CATCHUP_KAFKA_ROLE=$role: use combined, controller or broker" ;;
	esac
	[[ "$role" == combined || "${CATCHUP_KAFKA_SASL_SSL:-0}" != 1 ]] ||
		die "CATCHUP_KAFKA_SASL_SSL=1 is for a combined node only"
	version="$(kafka_version)"
	libs="$("$KAFKA_HERE/fetch.sh" "$version")"
	printf '%s\n' "$version" >"$data/version"
	sasl=0
	[[ "${CATCHUP_KAFKA_SASL_SSL:-0}" == 1 ]] && sasl=1
	((sasl)) && make_tls
	kerberos=0
	if ((sasl)) && [[ -n "${CATCHUP_KAFKA_KDC:-}" ]]; then
		# the broker's keytab and the KDC's krb5.conf, kept with the data for --restart
		[[ -f "$CATCHUP_KAFKA_KDC/broker.keytab" && -f "$CATCHUP_KAFKA_KDC/krb5.conf" ]] ||
			die "CATCHUP_KAFKA_KDC=$CATCHUP_KAFKA_KDC holds no broker.keytab and krb5.conf (test/kafka/kdc.sh start DIR)"
		mkdir -p "$data/kerberos"
		cp "$CATCHUP_KAFKA_KDC/broker.keytab" "$CATCHUP_KAFKA_KDC/krb5.conf" "$data/kerberos/"
		sed -n 's/^ *default_realm = //p' "$data/kerberos/krb5.conf" >"$data/kerberos/realm"
		kerberos=1
	fi
	for attempt in 1 2 3; do
		if ((sasl)); then
			read -r PLAINTEXT_PORT CONTROLLER_PORT SASL_SSL_PORT WRONG_HOST_PORT OAUTH_PORT GSSAPI_PORT < <(free_ports 6)
			((kerberos)) || GSSAPI_PORT=""
		elif [[ "$role" == controller ]]; then
			read -r CONTROLLER_PORT < <(free_ports 1)
			PLAINTEXT_PORT="" SASL_SSL_PORT="" WRONG_HOST_PORT=""
		elif [[ "$role" == broker ]]; then
			read -r PLAINTEXT_PORT < <(free_ports 1)
			CONTROLLER_PORT="" SASL_SSL_PORT="" WRONG_HOST_PORT=""
		else
			read -r PLAINTEXT_PORT CONTROLLER_PORT < <(free_ports 2)
			SASL_SSL_PORT="" WRONG_HOST_PORT=""
		fi
		METRICS_PORT=""
		if [[ "${CATCHUP_KAFKA_METRICS:-0}" == 1 && "$role" != controller ]]; then
			read -r METRICS_PORT < <(free_ports 1)
			while [[ " $PLAINTEXT_PORT $CONTROLLER_PORT ${SASL_SSL_PORT:-} ${WRONG_HOST_PORT:-} ${OAUTH_PORT:-} ${GSSAPI_PORT:-} " == *" $METRICS_PORT "* ]]; do
				read -r METRICS_PORT < <(free_ports 1)
			done
		fi
		rm -rf "$data/logs"
		write_ports
		write_config
		format_storage
		rc=0
		launch || rc=$?
		((rc == 0)) && break
		log "a port was taken meanwhile (attempt $attempt); picking new ones"
		((attempt < 3)) || die "could not bind free ports 3 times"
	done
fi

pid="$(cat "$data/pid")"
if [[ "$role" == controller ]]; then
	line="CONTROLLER=127.0.0.1:$CONTROLLER_PORT PID=$pid DATA=$data"
else
	line="BROKERS=127.0.0.1:$PLAINTEXT_PORT PID=$pid DATA=$data"
fi
if [[ -n "${METRICS_PORT:-}" ]]; then
	line+=" METRICS=http://127.0.0.1:$METRICS_PORT/metrics"
fi
if [[ -n "${SASL_SSL_PORT:-}" ]]; then
	line+=" SASL_SSL=127.0.0.1:$SASL_SSL_PORT CA=$data/tls/ca.crt SASL_SSL_WRONG_HOST=127.0.0.1:$WRONG_HOST_PORT OAUTH=127.0.0.1:$OAUTH_PORT"
fi
if [[ -n "${GSSAPI_PORT:-}" ]]; then
	line+=" GSSAPI=127.0.0.1:$GSSAPI_PORT"
fi
printf '%s\n' "$line" >"$data/info"
secs() { printf '%d.%03ds' $(($1 / 1000)) $(($1 % 1000)); }
msg="Kafka $version ready: broker $(secs "$STARTED_MS") (JVM start to \"Kafka Server started\")"
[[ -n "${FORMAT_MS:-}" ]] && msg+=", storage format $(secs "$FORMAT_MS")"
log "$msg, start.sh total $(secs $(($(now_ms) - START_T0)))"
printf '%s\n' "$line"
