// Package lambdaenv reads what catchup's Lambda functions are given by
// their environment: the pipeline configuration (inline in CATCHUP_CONFIG,
// or in the SSM parameter CATCHUP_CONFIG_PARAMETER), the checkpoint table,
// the SASL passwords the configuration names in AWS Secrets Manager, and the
// settings of each function. The variable names are constants so that a
// test can hold template.yaml to them.
//
// Everything here runs once per execution environment, in main, before the
// first invocation: secrets are fetched once and kept in memory, never logged.
package lambdaenv

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// Environment variables of both functions.
const (
	EnvConfig          = "CATCHUP_CONFIG"            // the configuration YAML, inline
	EnvConfigParameter = "CATCHUP_CONFIG_PARAMETER"  // or the name of an SSM parameter (String or SecureString) holding it
	EnvTable           = "CATCHUP_TABLE"             // the DynamoDB checkpoint table; the configuration's store defaults to it
	EnvNamespace       = "CATCHUP_METRICS_NAMESPACE" // CloudWatch namespace of the EMF metrics; default "catchup"
	EnvService         = "CATCHUP_SERVICE"           // value of the service metric dimension (the stack name); default "catchup"
	EnvTopicMetrics    = "CATCHUP_TOPIC_METRICS"     // "true": metrics per topic too (one custom metric per topic and name); default false
)

// Environment variables of the replicate function.
const (
	EnvMargin = "CATCHUP_DEADLINE_MARGIN" // how long before the invocation deadline copying stops; default worker.DefaultMargin (10s); 0s: none
)

// Environment variables of the dispatch function.
const (
	EnvReplicateFunction = "CATCHUP_REPLICATE_FUNCTION" // name or ARN of the replicate function; required
	EnvMaxShards         = "CATCHUP_MAX_SHARDS"         // most replicate invocations per dispatch; default 20
	EnvShardBytes        = "CATCHUP_SHARD_BYTES"        // estimated lag bytes one shard holds at most; default 4 GiB
	EnvShardPartitions   = "CATCHUP_SHARD_PARTITIONS"   // partitions one shard holds at most while the backlog is small; default 64
	EnvInvokeConcurrency = "CATCHUP_INVOKE_CONCURRENCY" // Invoke calls in flight at once; default 8
	// EnvReplicateConcurrency is the replicate function's reserved
	// concurrency: shards per dispatch are at most this many; default
	// CATCHUP_MAX_SHARDS.
	EnvReplicateConcurrency = "CATCHUP_REPLICATE_CONCURRENCY"
	// EnvShardPartitionsMax is the most partitions of one shard when the
	// backlog is large (shards take backlog / shards up to it); default 1024.
	EnvShardPartitionsMax = "CATCHUP_SHARD_PARTITIONS_MAX"
)

// Lambda's own variables that the functions read.
const (
	EnvFunctionName  = "AWS_LAMBDA_FUNCTION_NAME"
	EnvLogStreamName = "AWS_LAMBDA_LOG_STREAM_NAME"
	EnvMemorySize    = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" // MiB
)

// memoryLimitShare is the part of the function's memory the Go runtime is
// asked to stay under: the rest is for what it does not count (the binary's
// text, thread stacks of the OS) and the Lambda runtime API client.
const memoryLimitShare = 0.9

// SetMemoryLimit applies MemoryLimit to the Go runtime, if any, and logs it.
func SetMemoryLimit(getenv func(string) string, log *slog.Logger) {
	if limit := MemoryLimit(getenv); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("soft memory limit set from the function's memory size", "bytes", limit)
	}
}

// MemoryLimit returns the soft memory limit (runtime/debug.SetMemoryLimit)
// for a function with getenv's memory size: 90% of it, so that the garbage
// collector works harder before the function would be killed for running
// out of memory (a copy's heap grows with parallelism × fetch_bytes). It
// returns 0, meaning leave the runtime alone, when GOMEMLIMIT is set (the
// runtime applied it) or the memory size is unknown.
func MemoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	mib, err := strconv.ParseInt(getenv(EnvMemorySize), 10, 64)
	if err != nil || mib <= 0 {
		return 0
	}
	return int64(float64(mib<<20) * memoryLimitShare)
}

// Names lists the catchup variables each function reads, by function name
// as in template.yaml, for the check that the template sets them.
var Names = map[string][]string{
	"ReplicateFunction": {EnvConfig, EnvConfigParameter, EnvTable, EnvNamespace, EnvService, EnvTopicMetrics, EnvMargin},
	"DispatchFunction": {EnvConfig, EnvConfigParameter, EnvTable, EnvNamespace, EnvService, EnvTopicMetrics,
		EnvReplicateFunction, EnvMaxShards, EnvShardBytes, EnvShardPartitions, EnvInvokeConcurrency,
		EnvReplicateConcurrency, EnvShardPartitionsMax},
}

// ParameterAPI is the SSM call LoadConfig needs; *ssm.Client has it.
type ParameterAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// LoadConfig reads the configuration named by getenv: CATCHUP_CONFIG
// (inline YAML) or CATCHUP_CONFIG_PARAMETER (an SSM parameter, decrypted),
// exactly one of them. With CATCHUP_TABLE set, the store defaults to
// dynamodb://TABLE and a store naming anything else is an error; without
// it, the configuration must name a dynamodb:// store (a Lambda function
// has no lasting file system). Then it fetches the SASL passwords the
// configuration names by password_secret_arn, each secret once. params is
// used only with CATCHUP_CONFIG_PARAMETER, secrets only when a secret is
// named (pipeline.SecretsManagerFrom); either may be nil otherwise.
func LoadConfig(ctx context.Context, getenv func(string) string, params ParameterAPI, secrets config.SecretFetcher) (*config.File, error) {
	inline, param := getenv(EnvConfig), getenv(EnvConfigParameter)
	var data []byte
	var source string
	switch {
	case inline != "" && param != "":
		return nil, fmt.Errorf("both %s and %s are set: set one", EnvConfig, EnvConfigParameter)
	case inline != "":
		data, source = []byte(inline), "$"+EnvConfig
	case param != "":
		if params == nil {
			return nil, fmt.Errorf("%s is set but no SSM client was given", EnvConfigParameter)
		}
		out, err := params.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(param), WithDecryption: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("read configuration from SSM parameter %s: %w", param, err)
		}
		if out.Parameter == nil || aws.ToString(out.Parameter.Value) == "" {
			return nil, fmt.Errorf("SSM parameter %s is empty", param)
		}
		data, source = []byte(aws.ToString(out.Parameter.Value)), "ssm:"+param
	default:
		return nil, fmt.Errorf("no configuration: set %s to the YAML or %s to the name of an SSM parameter holding it", EnvConfig, EnvConfigParameter)
	}

	table := getenv(EnvTable)
	var f *config.File
	var err error
	if table != "" {
		f, err = config.ParseWithStore(data, source, "dynamodb://"+table)
	} else {
		f, err = config.Parse(data, source)
	}
	if err != nil {
		return nil, err
	}
	loc, err := f.StoreLocation()
	switch {
	case err != nil:
		return nil, err
	case table != "" && (loc.Scheme != "dynamodb" || loc.Path != table):
		return nil, fmt.Errorf("%s: store %s disagrees with %s=%s: leave store out of the configuration", source, f.Store, EnvTable, table)
	case loc.Scheme != "dynamodb":
		return nil, fmt.Errorf("%s: store %s: a Lambda function needs a dynamodb:// store (or %s)", source, f.Store, EnvTable)
	}
	if secrets == nil {
		secrets = pipeline.SecretsManager(nil, nil)
	}
	if err := f.ResolveSecrets(ctx, secrets); err != nil {
		return nil, err
	}
	return f, nil
}

// Needs returns the AWS operations of both functions' start: the
// configuration's SSM parameter (CATCHUP_CONFIG_PARAMETER, read decrypted)
// and pipeline.Needs (secrets, the store, a cluster's role).
func Needs() []awsapi.Need {
	return append([]awsapi.Need{{Service: "SSM", Operation: "GetParameter", Action: "ssm:GetParameter", Resource: awsapi.Parameter,
		DecryptVia: "ssm", By: "LoadConfig: CATCHUP_CONFIG_PARAMETER, once per execution environment, decrypted (a SecureString's customer-managed KMS key, through SSM)"}},
		pipeline.Needs()...)
}

// Duration reads the duration variable name (Go syntax, "10s"), def if unset.
func Duration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 10s", name, v)
	}
	return d, nil
}

// Int reads the positive integer variable name, def if unset.
func Int(getenv func(string) string, name string, def int64) (int64, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

// Bool reads the boolean variable name ("true" or "false", as
// strconv.ParseBool spells them), def if unset.
func Bool(getenv func(string) string, name string, def bool) (bool, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// String reads the variable name, def if unset.
func String(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// Logger returns the logger of a function: log/slog through
// lambdacontext.NewLogHandler, which writes JSON when the function's log
// format is JSON (template.yaml sets it) and adds the invocation's
// requestId to every record logged with its context.
func Logger() *slog.Logger {
	return slog.New(lambdacontext.NewLogHandler())
}

// Owner returns the lease owner id of this execution environment: the
// function name and the log stream, which names the execution environment,
// so that a lease in the table leads to the logs of its holder. fallback
// is used outside Lambda.
func Owner(getenv func(string) string, fallback string) string {
	fn, stream := getenv(EnvFunctionName), getenv(EnvLogStreamName)
	if fn == "" || stream == "" {
		return fallback
	}
	return fn + ":" + stream
}
