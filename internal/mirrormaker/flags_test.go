package mirrormaker

import (
	"slices"
	"testing"

	"github.com/kafka-catchup/catchup/internal/config"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		fl      Flags
		wantErr bool
		check   func(p *config.Pipeline) bool
		key     string
		want    string
	}{
		{"comma list", Flags{Whitelist: `"orders, payments"`}, false,
			func(p *config.Pipeline) bool {
				return p.Topics.Match("orders") && p.Topics.Match("payments") && !p.Topics.Match("orders2")
			},
			"--whitelist", `mapped: → topics.include: orders, payments (MirrorMaker read each comma as "or"; each pattern matches whole topic names, as there)`},
		{"blacklist only", Flags{Whitelist: " ", Blacklist: "test.*"}, false,
			func(p *config.Pipeline) bool { return p.Topics.Match("orders") && !p.Topics.Match("test1") },
			"--whitelist", "mapped: not given: → topics.include: .* (every topic), less --blacklist"},
		{"no whitelist", Flags{Whitelist: " "}, true, nil, "--whitelist", "invalid: required, as by MirrorMaker: a Java regular " +
			"expression or a comma-separated list of topics; --whitelist '.*' selects every topic (internal topics are never copied)"},
		{"java regex", Flags{Whitelist: "orders.*+"}, true, nil, "--whitelist", `invalid: "orders.*+" uses the possessive quantifier "*+", ` +
			"Java regex syntax that Go's RE2 engine does not support; drop the extra '+': RE2 never backtracks, so the plain quantifier is already linear-time"},
		{"include flag", Flags{Whitelist: "a", WhitelistFlag: "--include"}, false, nil, "--include",
			"mapped: → topics.include: a (matched against whole topic names, as by MirrorMaker)"},
		{"streams and producers", Flags{NumStreams: "3", NumProducers: "5"}, false,
			func(p *config.Pipeline) bool { return p.Parallelism == 5 }, "--num.producers", "mapped: → parallelism (the larger of --num.streams " +
				"and --num.producers): catchup copies up to 5 partitions of each pipeline at once where MirrorMaker ran 5 producers (catchup's default is 8)"},
		{"bad streams", Flags{NumStreams: "0"}, true, nil, "--num.streams", `invalid: "0" is not a positive integer`},
		{"commit interval", Flags{OffsetCommitIntervalMS: "60000"}, false,
			func(p *config.Pipeline) bool { return p.CommitInterval.Minutes() == 1 }, "--offset.commit.interval.ms",
			"mapped: → commit_interval: the most time between two checkpoint commits of a partition"},
		{"commit interval past the lease", Flags{OffsetCommitIntervalMS: "3600000"}, true, nil, "--offset.commit.interval.ms",
			"invalid: commit_interval: 1h0m0s is not shorter than lease_duration 20m0s; the lease would expire between commits"},
		{"message handler", Flags{MessageHandler: "com.example.Rename"}, true, nil, "--message.handler",
			"refused: catchup copies records unchanged (adding only its provenance header) and cannot run the Java message handler " +
				"com.example.Rename: one that renamed topics can be replaced by target_topic in the YAML (\"{source}.{topic}\", " +
				"\"{topic}.mirror\"); one that filtered or changed records has no equivalent"},
		{"store", Flags{Store: "s3://bucket"}, true, nil, "--store", `invalid: "s3://bucket" is not file://PATH or dynamodb://TABLE`},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer, plainProducer, tt.fl)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Contains(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if tt.check != nil && err == nil && !tt.check(&m.File.Pipelines[0]) {
			t.Errorf("%s: pipeline %+v", tt.name, m.File.Pipelines[0])
		}
	}
}
