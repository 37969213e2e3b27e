#!/usr/bin/env bash
# Watch a replication on the local stack (docker compose up first; see
# README.md): create the topic on both brokers, write records to the
# source, invoke the dispatcher, then show the checkpoints in DynamoDB, the
# target's end offsets and the functions' logs.
#
# The stack's EventBridge Scheduler schedule invokes the dispatcher every
# minute where LocalStack runs schedules; this script does not wait for it.
set -euo pipefail
cd "$(dirname "$0")"

readonly topic=${TOPIC:-demo.orders} records=${RECORDS:-3000}
compose() { docker compose -f docker-compose.yml "$@"; }
aws() { compose exec -T localstack awslocal "$@"; }
output() { aws cloudformation describe-stacks --stack-name catchup --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text; }

echo "1. topic $topic (3 partitions) on both brokers"
compose exec -T kafka-source bash -c 'cat >/tmp/client.properties' <<'PROPS'
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="replicator" password="catchup-local-secret";
PROPS
compose exec -T kafka-source /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka-source:9092 \
  --command-config /tmp/client.properties --create --if-not-exists --topic "$topic" --partitions 3
compose exec -T kafka-target /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka-target:9092 \
  --create --if-not-exists --topic "$topic" --partitions 3

echo "2. $records records into the source"
seq 1 "$records" | sed 's/.*/key-&:value-&/' | compose exec -T kafka-source /opt/kafka/bin/kafka-console-producer.sh \
  --bootstrap-server kafka-source:9092 --producer.config /tmp/client.properties --topic "$topic" \
  --property parse.key=true --property key.separator=:

echo "3. invoke the dispatcher"
dispatch=$(output DispatchFunctionName)
aws lambda invoke --function-name "$dispatch" --cli-binary-format raw-in-base64-out --payload '{}' /tmp/dispatch.json >/dev/null
compose exec -T localstack cat /tmp/dispatch.json
echo

echo "4. waiting for the workers"
sleep "${WAIT_SECONDS:-20}"

echo "5. checkpoints"
aws dynamodb scan --table-name "$(output CheckpointTableName)" \
  --query 'Items[].[pipeline.S, partition.S, next.N, records.N]' --output table

echo "6. target end offsets"
compose exec -T kafka-target /opt/kafka/bin/kafka-get-offsets.sh --bootstrap-server kafka-target:9092 --topic "$topic"

echo "7. the workers' log lines (JSON, with EMF metric lines)"
aws logs filter-log-events --log-group-name "/aws/lambda/$(output ReplicateFunctionName)" \
  --query 'events[].message' --output text | tr '\t' '\n' | tail -n 20
