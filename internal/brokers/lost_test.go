package brokers_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestReplicatedStoreLost: the checkpoint store cannot vouch for a copy the
// target already holds, on the RF=3 target with follower 2 stalled across the
// loss (the dead run's last requests appended above the high watermark): the
// file store folder removed after kill -9 of the real binary, the DynamoDB
// table deleted and recreated under a running copy, a new empty table, a
// renamed pipeline, and, as guards, a file store put back to an older copy
// of itself and a table replaced by an older snapshot of its items. The next run reads the target back once the high watermark has
// reached the leader's log end, resumes after its copies, and exits 0; a
// consumer of the test's own counts 0 lost and 0 duplicated. A reset below
// the target's copies is then refused (exit 2). In "nothing replicated
// yet" the follower stalls before the first run starts, and that run is
// killed once the leader holds its copies of every partition while the high
// watermark is still 0, as for a partition never written to; the follower
// resumes once the next run has planned (its first store write), so that
// this run's first produce succeeds: had it taken the partitions for empty,
// that produce would copy them a second time.
func TestReplicatedStoreLost(t *testing.T) {
	e := needBrokers(t)
	r := needReplicated(t)
	bin := catchupBinary(t)
	for _, tc := range []struct {
		name  string
		store string
		// lose runs after the first run was killed (or, with selfEnd, ended
		// by itself); older is a copy of the store taken while it copied.
		lose    func(ctx context.Context, t *testing.T, h *childCopy, older string)
		selfEnd bool
		// stallFirst: the follower stalls before the first run starts.
		stallFirst bool
	}{
		{name: "nothing replicated yet, file store removed", store: "file", stallFirst: true, lose: func(_ context.Context, t *testing.T, h *childCopy, _ string) {
			if err := os.RemoveAll(h.spec.store); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file store removed after kill -9", store: "file", lose: func(_ context.Context, t *testing.T, h *childCopy, _ string) {
			if err := os.RemoveAll(h.spec.store); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file store replaced by an older copy", store: "file", lose: func(_ context.Context, t *testing.T, h *childCopy, older string) {
			h.rewrite(t, func(s *spec) { s.store = older })
		}},
		{name: "pipeline renamed", store: "file", lose: func(_ context.Context, t *testing.T, h *childCopy, _ string) {
			h.rewrite(t, func(s *spec) { s.name = "child-renamed" })
		}},
		{name: "new empty table", store: "dynamodb", lose: func(_ context.Context, t *testing.T, h *childCopy, _ string) {
			h.rewrite(t, func(s *spec) { s.store = "dynamodb://" + dynamotest.Table(t, h.dynamo) })
		}},
		{name: "table replaced by an older snapshot of its items", store: "dynamodb", lose: func(ctx context.Context, t *testing.T, h *childCopy, older string) {
			table := dynamotest.Table(t, h.dynamo)
			for _, item := range h.snapshot {
				if _, err := h.dynamo.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			h.rewrite(t, func(s *spec) { s.store = "dynamodb://" + table })
		}},
		{name: "table deleted and recreated mid-copy", store: "dynamodb", selfEnd: true, lose: func(ctx context.Context, t *testing.T, h *childCopy, _ string) {
			// (The table was deleted under the running copy; see below.)
			table := h.spec.store[len("dynamodb://"):]
			if err := dynamostore.CreateTable(ctx, h.dynamo, table); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, 4*time.Minute)
			topic := uniqueTopic("lost")
			h := newChildCopy(ctx, t, e, r, bin, topic, tc.store)
			if tc.stallFirst {
				h.ends(ctx) // the client learns broker 1's address now: a request to stalled broker 2 would hang
				// The runs bootstrap from brokers 1 and 3 only (cluster.sh
				// lists the listeners by id): a metadata request to the
				// paused broker would hold a run up past
				// replica.lag.time.max.ms, and the ISR would shrink.
				seeds := r.Seeds()
				h.rewrite(t, func(s *spec) { s.target = plaintext("it-replicated", seeds[0]+","+seeds[2]) })
				resume := r.Pause(t, 2)
				c1 := h.start(t)
				h.waitUnreplicated(ctx, t, c1)
				c1.kill(t)
				tc.lose(ctx, t, h, "")
				c2 := h.start(t)
				waitStoreWritten(ctx, t, h.spec.store, c2, 5*time.Second)
				resume()
				exits := []string{c1.exit, c2.wait(t)}
				r.WaitInSync(ctx, t, topic, killPartitions, 1)
				h.check(ctx, t, fmt.Sprintf("store lost (%s), follower 2 stalled", tc.name), exits)
				return
			}
			c1 := h.start(t)
			h.waitCopying(ctx, t, c1)
			older := t.TempDir()
			if tc.store == "file" {
				if err := os.CopyFS(older, os.DirFS(h.spec.store)); err != nil {
					t.Fatal(err)
				}
			} else {
				table := h.spec.store[len("dynamodb://"):]
				out, err := h.dynamo.Scan(ctx, &dynamodb.ScanInput{TableName: &table})
				if err != nil {
					t.Fatal(err)
				}
				h.snapshot = out.Items
			}
			// 5 s: past the next run's shared settle of its partitions
			// without a checkpoint (its second look comes about 1.5 s
			// after the kill below), which must find the high watermark
			// behind; below replica.lag.time.max.ms (6 s), so that the
			// ISR keeps the follower. With 4 s the stall often ended
			// first, and a settle that ignored the high watermark passed.
			resumed := r.Stall(t, 2, 5*time.Second)
			if tc.selfEnd {
				table := h.spec.store[len("dynamodb://"):]
				if _, err := h.dynamo.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &table}); err != nil {
					t.Fatal(err)
				}
				if exit := c1.wait(t); exit != "1" {
					t.Errorf("the run whose table was deleted exited %s; want 1", exit)
				}
			} else {
				time.Sleep(2500 * time.Millisecond) // past producer.timeout: appended, not visible
				c1.kill(t)
			}
			tc.lose(ctx, t, h, older)
			c2 := h.start(t)
			exits := []string{c1.exit, c2.wait(t)}
			<-resumed
			r.WaitInSync(ctx, t, topic, killPartitions, 1)
			if exits[1] != "0" {
				exits = append(exits, h.start(t).wait(t))
			}
			h.check(ctx, t, fmt.Sprintf("store lost (%s), follower 2 stalled", tc.name), exits)
			h.resetRefused(t)
		})
	}
}

// waitUnreplicated waits until the leader of every target partition holds
// records of c's copy while the high watermark of each is still 0 (a
// follower stalled before the copy started): none of them is visible yet.
func (h *childCopy) waitUnreplicated(ctx context.Context, t *testing.T, c *child) {
	t.Helper()
	var leo []string
	c.waitFor(ctx, t, 20*time.Millisecond, "the leader held records of every partition", func() bool {
		var hwm []int64
		hwm, leo = h.ends(ctx)
		appended := 0
		for p := range killPartitions {
			if p < len(hwm) && hwm[p] > 0 {
				t.Fatalf("partition %d: high watermark %d; want 0 while the follower is stalled (log ends %v)", p, hwm[p], leo)
			}
			if leo[p] != "?" && leo[p] != "0" {
				appended++
			}
		}
		if len(hwm) == killPartitions && appended == killPartitions {
			t.Logf("killed with the leader's log ends at %v, the high watermarks at %v", leo, hwm)
			return true
		}
		return false
	})
}

// waitStoreWritten waits until c, a run over the file store folder dir,
// wrote its first checkpoint or lease there (it planned its windows and
// read the target's ends before), or for at most within: a request of c's
// that a paused broker holds would otherwise wait for ever.
func waitStoreWritten(ctx context.Context, t *testing.T, dir string, c *child, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	c.waitFor(ctx, t, 5*time.Millisecond, "it wrote to its store", func() bool {
		if time.Now().After(deadline) {
			t.Logf("the run wrote nothing to its store within %v; resuming the follower", within)
			return true
		}
		names, _ := filepath.Glob(filepath.Join(dir, "*.j*"))
		return len(names) > 0
	})
}

// waitFor calls done every interval until it returns true, and fails the
// test if c ends or ctx is done first, naming what it waited for.
func (c *child) waitFor(ctx context.Context, t *testing.T, every time.Duration, what string, done func() bool) {
	t.Helper()
	for !done() {
		select {
		case err := <-c.exited:
			c.exit = exitCode(err)
			t.Fatalf("catchup run ended (exit %s) before %s:\n%s", c.exit, what, c.out.String())
		case <-ctx.Done():
			t.Fatalf("catchup run: %v before %s:\n%s", ctx.Err(), what, c.out.String())
		case <-time.After(every):
		}
	}
}

// resetRefused runs `catchup reset --to earliest --yes` on h's pipeline,
// whose target holds every record: it must exit 2 and change nothing.
func (h *childCopy) resetRefused(t *testing.T) {
	t.Helper()
	c := &child{exited: make(chan error, 1)}
	c.cmd = exec.Command(h.bin, "reset", "-c", h.cfg, "--pipeline", h.spec.name, "--topic", h.topic, "--to", "earliest", "--yes")
	c.cmd.Env = h.env
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	err := c.cmd.Run()
	if got := exitCode(err); got != "2" {
		t.Errorf("reset to earliest below the target's copies: exit %s, want 2 (refused)\n%s", got, c.out.String())
	}
}

// TestStoreLost is TestReplicatedStoreLost's everyday cases on the
// single-broker target, in process: a pipeline copied a topic, more records
// arrived, and the next run meets the filled target with a store that holds
// nothing for it (a new file store folder, a new DynamoDB table, the
// pipeline renamed). It copies only the new records; the test's consumer
// finds each source record once in the target.
func TestStoreLost(t *testing.T) {
	e := needBrokers(t)
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, s *spec, o *pipeline.Options)
	}{
		{"new file store folder", func(t *testing.T, s *spec, _ *pipeline.Options) { s.store = t.TempDir() }},
		{"pipeline renamed", func(_ *testing.T, s *spec, _ *pipeline.Options) { s.name += "-renamed" }},
		{"new empty table", func(t *testing.T, _ *spec, o *pipeline.Options) {
			client := dynamotest.Client(t, dynamotest.Endpoint(t))
			o.Store = dynamostore.New(client, dynamotest.Table(t, client))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, 2*time.Minute)
			s := spec{store: t.TempDir(), name: "lost", topic: uniqueTopic("lost"),
				source: plaintext("it-source", e.source.brokers), target: plaintext("it-target", e.target.brokers),
				extra: "    create_topics: true\n"}
			createTopic(ctx, t, e.source.brokers, s.topic, 4)
			first := makeRecords(s.topic, 4, 300, 64)
			seed(ctx, t, e.source.brokers, first, 4<<10)
			runOnce := func(what string, o pipeline.Options) *replicate.Report {
				pl := open(ctx, t, s, o)
				defer pl.Close()
				rep, err := pl.Engine.Run(ctx)
				requireDone(t, what, rep, err)
				return rep
			}
			runOnce("first run", pipeline.Options{})
			seed(ctx, t, e.source.brokers, makeRecords(s.topic, 4, 100, 64), 4<<10)
			var o pipeline.Options
			tc.lose(t, &s, &o)
			if copied, _, _ := runOnce("run after the store was lost", o).Totals(); copied != 400 {
				t.Errorf("the run after the store was lost copied %d records; want the 400 new ones", copied)
			}
			checkExactCopy(t, "target", readAll(ctx, t, e.target.brokers, s.topic, 4), readAll(ctx, t, e.source.brokers, s.topic, 4), s.source.name)
		})
	}
}
