// Package e2e runs the real bootstrap binaries of the Lambda functions end
// to end on one machine: it builds them, runs each under the AWS Lambda
// Runtime Interface Emulator (aws-lambda-rie, Lambda's own Runtime API)
// with the environment, memory and timeout template.yaml gives it, behind
// a loopback server of the Lambda Invoke API that the dispatcher's SDK
// client reaches (rie_test.go); serves the Secrets Manager, SSM and STS
// calls from a test double (aws_test.go); and points them at in-process
// Kafka clusters (kfake) and a DynamoDB API (dynalite, through dynamotest).
// template_test.go checks that template.yaml and the code agree.
//
// Every bootstrap a test runs records the AWS calls it sends
// (CATCHUP_AWS_RECORD); when the test ends, permissions_test.go evaluates
// each with the IAM policy simulator (@cloud-copilot/iam-simulate, through
// testdata/simulate.mjs) against the policies template.yaml gives the
// sending function's role, resolved with the test's own table, function,
// configuration parameter, secrets and cluster roles.
//
// runtime_test.go keeps a Runtime API written in the test for the one
// thing the emulator cannot give: the instant a bootstrap first asks for
// an invocation (TestStartupTime, make measure-lambda).
//
// The package has only tests; this file holds its documentation.
package e2e
