// Command catchup copies bounded windows of Kafka topics from a source
// cluster to a target cluster and records its progress, so that every run
// resumes exactly where the last acknowledged write ended.
//
// Exit codes: 0 done, 1 failure (or not finished), 2 bad usage or config.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
