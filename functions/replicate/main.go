// Command replicate is the catchup worker Lambda function: each invocation
// copies the windows of one pipeline, or of the partitions its event names,
// until done or until a margin before its deadline. The handler is
// worker.Handler; this file only wires it.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/version"
	"github.com/kafka-catchup/catchup/internal/worker"
)

func main() {
	ctx := context.Background()
	log := lambdaenv.Logger()
	lambdaenv.SetMemoryLimit(os.Getenv, log)
	fail := func(msg string, err error) {
		log.Error(msg, "error", err)
		os.Exit(1)
	}

	// Configuration: YAML from the environment or SSM, secrets from Secrets Manager.
	awsCfg, err := awsapi.Config(ctx)
	if err != nil {
		fail("load AWS configuration", err)
	}
	file, err := lambdaenv.LoadConfig(ctx, os.Getenv, ssm.NewFromConfig(awsCfg), pipeline.SecretsManagerFrom(awsCfg))
	if err != nil {
		fail("load catchup configuration", err)
	}
	margin, err := lambdaenv.Duration(os.Getenv, lambdaenv.EnvMargin, worker.DefaultMargin)
	if err != nil {
		fail("read settings", err)
	}
	topicMetrics, err := lambdaenv.Bool(os.Getenv, lambdaenv.EnvTopicMetrics, false)
	if err != nil {
		fail("read settings", err)
	}
	loc, err := file.StoreLocation()
	if err != nil {
		fail("read store", err)
	}

	// Clients, kept for the life of the execution environment.
	store, err := pipeline.OpenStore(ctx, file)
	if err != nil {
		fail("open store", err)
	}
	emitter := metrics.New(os.Stdout, lambdaenv.String(os.Getenv, lambdaenv.EnvNamespace, metrics.DefaultNamespace), nil)

	// Handler.
	h, err := worker.New(worker.Options{
		File:       file,
		Store:      store,
		Owner:      lambdaenv.Owner(os.Getenv, pipeline.DefaultOwner()),
		Margin:     margin,
		Log:        log,
		Metrics:    emitter,
		Service:    lambdaenv.String(os.Getenv, lambdaenv.EnvService, metrics.DefaultService),
		Concurrent: lambdacontext.MaxConcurrency() > 1,
		// Per topic only on request: a custom metric per topic and name.
		TopicMetrics: topicMetrics,
	})
	if err != nil {
		fail("build handler", err)
	}
	log.Info("ready", version.Get().LogAttr(), slog.Int("pipelines", len(file.Pipelines)), slog.String("table", loc.Path))
	lambda.StartWithOptions(h.Handle, lambda.WithContext(ctx))
}
