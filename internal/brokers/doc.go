// Package brokers holds the tests that need real Apache Kafka brokers rather
// than kfake: a broker killed with SIGKILL in the middle of a copy and
// restarted on its data directory, SASL_SSL with SCRAM-SHA-512, and TLS
// verification against a certificate for the wrong host. It has no code of
// its own.
//
// test/kafka/it.sh starts a source and a target cluster and runs these tests
// with their addresses in the environment (CATCHUP_IT_SOURCE,
// CATCHUP_IT_TARGET and the rest of the env file test/kafka/cluster.sh
// writes). Without them the tests skip, unless CATCHUP_REQUIRE_KAFKA=1, which
// makes a missing broker a failure. The fault tests stop and restart the
// shared brokers: run this package alone (go test -p 1, as it.sh does).
//
// TestMSKIAM is the exception: it needs no broker, and checks the AWS_MSK_IAM
// mechanism through the SASL exchange of an in-process kfake cluster.
package brokers
