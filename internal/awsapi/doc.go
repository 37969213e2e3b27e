// Package awsapi is how catchup reaches AWS: Config loads the SDK's
// configuration the same way for the Lambda functions and the CLI, and it
// is where the permissions catchup needs are stated and observed.
//
// Every adapter that sends AWS requests states, as a list of Need, the IAM
// action of each operation it sends and the resource it acts on
// (dynamostore.Needs, fanout.Needs, pipeline.Needs, lambdaenv.Needs), as
// kafkago.Needs does for the kafka-cluster: actions of MSK. Those lists are
// the single source of template.yaml's grants and of docs/permissions.md.
//
// A Recorder is a middleware of the SDK's clients that writes down every
// operation sent, with its resource and the catchup code that sent it. It
// is a test hook: Config installs it when the environment variable
// CATCHUP_AWS_RECORD names a file (the end-to-end suites set it for each
// bootstrap and CLI process), and tests install it in-process with
// Recorder.Register. The suites then hold every recorded call to the
// policies template.yaml gives the function that sent it, evaluated by an
// IAM policy simulator.
package awsapi
