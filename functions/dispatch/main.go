// Command dispatch is the catchup dispatcher Lambda function: on a
// schedule, it surveys every pipeline and invokes the replicate function
// asynchronously once per shard of the backlog. The handler is
// fanout.Dispatcher; this file only wires it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/version"
)

func main() {
	ctx := context.Background()
	log := lambdaenv.Logger()
	lambdaenv.SetMemoryLimit(os.Getenv, log)
	fail := func(msg string, err error) {
		log.Error(msg, "error", err)
		os.Exit(1)
	}

	// Configuration: YAML from the environment or SSM, secrets from Secrets
	// Manager, and the shard limits.
	awsCfg, err := awsapi.Config(ctx)
	if err != nil {
		fail("load AWS configuration", err)
	}
	file, err := lambdaenv.LoadConfig(ctx, os.Getenv, ssm.NewFromConfig(awsCfg), pipeline.SecretsManagerFrom(awsCfg))
	if err != nil {
		fail("load catchup configuration", err)
	}
	loc, err := file.StoreLocation()
	if err != nil {
		fail("read store", err)
	}
	function := os.Getenv(lambdaenv.EnvReplicateFunction)
	if function == "" {
		fail("read settings", fmt.Errorf("%s is not set: name the replicate function", lambdaenv.EnvReplicateFunction))
	}
	setting := func(name string, def int64) int64 {
		v, err := lambdaenv.Int(os.Getenv, name, def)
		if err != nil {
			fail("read settings", err)
		}
		return v
	}
	// More shards than the replicate function's reserved concurrency would
	// only queue behind each other (throttled asynchronous invocations).
	maxShards := setting(lambdaenv.EnvMaxShards, fanout.DefaultMaxShards)
	limits := fanout.Limits{
		MaxShards:        int(min(maxShards, setting(lambdaenv.EnvReplicateConcurrency, maxShards))),
		MaxPartitions:    int(setting(lambdaenv.EnvShardPartitions, fanout.DefaultShardPartitions)),
		PartitionCeiling: int(setting(lambdaenv.EnvShardPartitionsMax, fanout.DefaultShardPartitionsMax)),
		MaxBytes:         setting(lambdaenv.EnvShardBytes, fanout.DefaultShardBytes),
	}
	concurrency := int(setting(lambdaenv.EnvInvokeConcurrency, fanout.DefaultInvokeConcurrency))
	topicMetrics, err := lambdaenv.Bool(os.Getenv, lambdaenv.EnvTopicMetrics, false)
	if err != nil {
		fail("read settings", err)
	}

	// Clients, kept for the life of the execution environment.
	store, err := pipeline.OpenStore(ctx, file)
	if err != nil {
		fail("open store", err)
	}
	invoker := fanout.LambdaInvoker{Client: awslambda.NewFromConfig(awsCfg), Function: function}
	emitter := metrics.New(os.Stdout, lambdaenv.String(os.Getenv, lambdaenv.EnvNamespace, metrics.DefaultNamespace), nil)

	// Handler.
	d, err := fanout.New(fanout.Options{
		File:         file,
		Store:        store,
		Invoker:      invoker,
		Limits:       limits,
		Concurrency:  concurrency,
		Log:          log,
		Metrics:      emitter,
		Service:      lambdaenv.String(os.Getenv, lambdaenv.EnvService, metrics.DefaultService),
		TopicMetrics: topicMetrics,
	})
	if err != nil {
		fail("build handler", err)
	}
	log.Info("ready", version.Get().LogAttr(), slog.Int("pipelines", len(file.Pipelines)), slog.String("table", loc.Path), slog.String("replicate_function", function))
	lambda.StartWithOptions(d.Handle, lambda.WithContext(ctx))
}
