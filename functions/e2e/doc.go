// Package e2e runs the real bootstrap binaries of the Lambda functions end
// to end on one machine: it builds them, serves them the Lambda Runtime API
// from the test (runtime_test.go), serves the AWS calls they make to
// Lambda, Secrets Manager and SSM from a test double (aws_test.go), and
// points them at in-process Kafka clusters (kfake) and a DynamoDB API
// (dynalite, through dynamotest). template_test.go checks that
// template.yaml and the code agree.
//
// The package has only tests; this file holds its documentation.
package e2e
