package e2e

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestTemplateDefaultsAreTheCodes: the values template.yaml gives the
// functions' settings, as parameter defaults or as fixed variables, are the
// defaults the code takes when a variable is unset (fanout.Default*,
// worker.DefaultMargin): one value, written twice only because
// CloudFormation cannot read Go, and held equal here.
func TestTemplateDefaultsAreTheCodes(t *testing.T) {
	raw := rawTemplate(t)
	env := func(fn, name string) any {
		return dig(raw, "Resources", fn, "Properties", "Environment", "Variables", name)
	}
	str := scalar
	got := map[string]string{
		"MaxShards parameter":                    str(dig(raw, "Parameters", "MaxShards", "Default")),
		"ShardBytes parameter":                   str(dig(raw, "Parameters", "ShardBytes", "Default")),
		lambdaenv.EnvShardPartitions:             str(env("DispatchFunction", lambdaenv.EnvShardPartitions)),
		lambdaenv.EnvShardPartitionsMax:          str(env("DispatchFunction", lambdaenv.EnvShardPartitionsMax)),
		lambdaenv.EnvInvokeConcurrency:           str(env("DispatchFunction", lambdaenv.EnvInvokeConcurrency)),
		lambdaenv.EnvMargin + " (ReplicateFunc)": str(env("ReplicateFunction", lambdaenv.EnvMargin)),
	}
	want := map[string]string{
		"MaxShards parameter":                    fmt.Sprint(fanout.DefaultMaxShards),
		"ShardBytes parameter":                   fmt.Sprint(fanout.DefaultShardBytes),
		lambdaenv.EnvShardPartitions:             fmt.Sprint(fanout.DefaultShardPartitions),
		lambdaenv.EnvShardPartitionsMax:          fmt.Sprint(fanout.DefaultShardPartitionsMax),
		lambdaenv.EnvInvokeConcurrency:           fmt.Sprint(fanout.DefaultInvokeConcurrency),
		lambdaenv.EnvMargin + " (ReplicateFunc)": worker.DefaultMargin.String(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("template.yaml's settings differ from the code's defaults (-code +template):\n%s", diff)
	}
}
