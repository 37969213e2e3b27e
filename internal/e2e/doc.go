// Package e2e holds catchup's end-to-end scenarios: each test opens a
// pipeline with pipeline.Open from a YAML configuration, exactly as the CLI
// and the Lambda functions do, copies between two Kafka clusters and checks
// the target against the source record for record (partition, key, value,
// headers, timestamp, and the provenance header naming the source offset).
//
// The same tests run against two kinds of clusters:
//
//   - by default, two in-process kfake clusters per test (hermetic, fast,
//     with fault injection);
//   - real Apache Kafka brokers when CATCHUP_IT_SOURCE and CATCHUP_IT_TARGET
//     hold their broker lists (test/kafka/cluster.sh up writes them, with
//     CATCHUP_IT_KAFKA_VERSION). Topics then get unique names and are created
//     by the tests, since the brokers do not create topics automatically.
//     Scenarios that need kfake's fault injection skip with the reason.
//     CATCHUP_REQUIRE_KAFKA=1 (test/kafka/it.sh sets it) makes the tests
//     fail when the broker lists are missing instead of using kfake.
//
// The package has no API; everything is in its tests.
package e2e
