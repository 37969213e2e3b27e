package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/testbin"
)

// TestDefaultsThroughTheBinary: one row per promise of the configuration
// reference (docs/configuration.md "Defaults", internal/config.Defaults) that "0 means
// none" or "unset means the default", or that a 0 the engine cannot use is
// refused naming its key, checked on what `catchup run --json` does, through
// the real binary. The retries rows fail every produce with a retriable
// error and read how many retries the engine made before giving up.
func TestDefaultsThroughTheBinary(t *testing.T) {
	bin := testbin.BuildT(t, "./cmd/catchup")
	refuseProduce := func(t *testing.T, e *cliEnv) {
		e.dst.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
			e.dst.KeepControl()
			res := req.ResponseKind().(*kmsg.ProduceResponse)
			for _, rt := range req.(*kmsg.ProduceRequest).Topics {
				st := kmsg.NewProduceResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewProduceResponseTopicPartition()
					sp.Partition = rp.Partition
					sp.ErrorCode = kerr.NotLeaderForPartition.Code
					st.Partitions = append(st.Partitions, sp)
				}
				res.Topics = append(res.Topics, st)
			}
			return res, nil, true
		})
	}
	for _, tc := range []struct {
		name     string
		producer string // the producer block's keys besides batch_records
		extra    string // pipeline keys
		stage    func(t *testing.T, e *cliEnv)
		code     int
		status   string // of every partition; "" : the run is refused
		errHas   string // in every partition's error, or in the document's
	}{{
		name:     "producer.retries: 0 means no retries",
		producer: "retries: 0, retry_backoff: 1ms",
		stage:    refuseProduce,
		code:     exitFailure,
		status:   "failed",
		errHas:   "giving up after 0 retries",
	}, {
		name:     "producer.retries unset means 10",
		producer: "retry_backoff: 1ms",
		stage:    refuseProduce,
		code:     exitFailure,
		status:   "failed",
		errHas:   "giving up after 10 retries",
	}, {
		name:   "window limits 0 mean no limit",
		extra:  "    window: {max_records: 0, max_bytes: 0, max_duration: 0s}\n",
		code:   exitOK,
		status: "done",
	}, {
		name:   "takeover_settle and replication_wait 0 turn the waits off",
		extra:  "    takeover_settle: 0s\n    replication_wait: 0s\n",
		code:   exitOK,
		status: "done",
	}, {
		name:   "config_sync_interval 0 syncs every run",
		extra:  "    create_topics: true\n    config_sync_interval: 0s\n",
		code:   exitOK,
		status: "done",
	}, {
		name:   "parallelism 0 is refused by key",
		extra:  "    parallelism: 0\n",
		code:   exitUsage,
		errHas: "pipelines[0] (cli): parallelism: 0 must be at least 1",
	}, {
		name:     "producer.batch_records 0 is refused by key",
		producer: "batch_records: 0",
		code:     exitUsage,
		errHas:   "pipelines[0] (cli): producer.batch_records: 0 must be positive",
	}, {
		name:   "commit_interval 0 is refused by key",
		extra:  "    commit_interval: 0s\n",
		code:   exitUsage,
		errHas: "pipelines[0] (cli): commit_interval: 0s must be positive",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLIEnv(t)
			if tc.stage != nil {
				tc.stage(t, e)
			}
			producer := "batch_records: 25"
			if strings.Contains(tc.producer, "batch_records") {
				producer = ""
			}
			if tc.producer != "" {
				producer = strings.TrimPrefix(producer+", "+tc.producer, ", ")
			}
			commit := "    commit_interval: 20ms\n"
			if strings.Contains(tc.extra, "commit_interval") {
				commit = ""
			}
			yaml := fmt.Sprintf("store: file://%s\npipelines:\n  - name: %s\n    source: {name: %s, brokers: [%s]}\n"+
				"    target: {name: cli-dst, brokers: [%s]}\n    topics: {include: [%s]}\n%s    producer: {%s}\n%s",
				filepath.Join(e.dir, "store"), cliPipeline, cliSrcName, e.src.ListenAddrs()[0], e.dst.ListenAddrs()[0],
				cliTopic, commit, producer, tc.extra)
			cfg := filepath.Join(e.dir, "defaults.yaml")
			if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Parallel()
			r := runBinary(t, bin, append(os.Environ(), "CATCHUP_OWNER="), nil, "run", "--json", "-c", cfg)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			doc := decodeDoc[reportJSONT](t, r.stdout)
			if tc.status == "" {
				if !strings.Contains(doc.Error, tc.errHas) || !strings.Contains(r.stderr, tc.errHas) {
					t.Errorf("--json error %q and stderr %q, want both to say %q", doc.Error, r.stderr, tc.errHas)
				}
				return
			}
			if len(doc.Pipelines) != 1 || len(doc.Pipelines[0].Partitions) != cliParts {
				t.Fatalf("--json: want one pipeline of %d partitions:\n%s", cliParts, r.stdout)
			}
			for _, p := range doc.Pipelines[0].Partitions {
				if p.Status != tc.status || !strings.Contains(p.Error, tc.errHas) || (tc.errHas == "") != (p.Error == "") {
					t.Errorf("partition %d: status %s, error %q; want %s with an error containing %q", p.Partition, p.Status, p.Error, tc.status, tc.errHas)
				}
			}
		})
	}
}
