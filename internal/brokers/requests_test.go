package brokers_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// requests are the requests some brokers received, by API, as Kafka counts
// them (kafka.network:type=RequestMetrics,name=RequestsPerSec, summed over
// API versions and brokers). "Fetch" counts every fetch and
// "FetchFollower" the followers' part of them.
type requests map[string]int64

// minus returns r - before, API by API.
func (r requests) minus(before requests) requests {
	out := requests{}
	for k, v := range r {
		out[k] = v - before[k]
	}
	return out
}

// brokerRequests reads the request counters of the brokers of the start.sh
// data folders dirs, from the Prometheus JMX exporter that start.sh loads
// into a broker with CATCHUP_KAFKA_METRICS=1 (it.sh sets it), at the
// address start.sh wrote into the folder's info file as METRICS=.
func brokerRequests(ctx context.Context, t *testing.T, dirs ...string) requests {
	t.Helper()
	sum := requests{}
	for _, dir := range dirs {
		info, err := os.ReadFile(filepath.Join(dir, "info"))
		if err != nil {
			t.Fatalf("broker of %s: %v", dir, err)
		}
		url := ""
		for f := range strings.FieldsSeq(string(info)) {
			if u, ok := strings.CutPrefix(f, "METRICS="); ok {
				url = u
			}
		}
		if url == "" {
			missing(t, "the broker of "+dir+" serves no counters (CATCHUP_KAFKA_METRICS=1 for cluster.sh up)")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("broker counters of %s: %v", dir, err)
		}
		if res.StatusCode != http.StatusOK {
			_ = res.Body.Close()
			t.Fatalf("broker counters of %s at %s: %s", dir, url, res.Status)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(res.Body)
		_ = res.Body.Close()
		if err != nil {
			t.Fatalf("broker counters of %s at %s: %v", dir, url, err)
		}
		if e := fams["jmx_scrape_error"]; e == nil || len(e.GetMetric()) != 1 || e.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Fatalf("broker counters of %s at %s: the exporter did not read the broker's MBeans (jmx_scrape_error %v)", dir, url, e)
		}
		// A broker that has received no request yet has no such family.
		for _, m := range fams["kafka_network_requests_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "request" {
					sum[l.GetValue()] += int64(m.GetCounter().GetValue())
				}
			}
		}
	}
	return sum
}

// TestReplicatedRequests counts what a copy asks of real brokers, as the
// brokers themselves count it: the produce requests to the replicated
// target and the fetches from the source follow the bytes copied, a batch
// of up to producer.batch_bytes for a partition and a fetch of up to
// fetch_bytes at a time, not the source's record batches (16 KiB here,
// uncompressed, about 60 of them to a batch); and a second run, with
// nothing new to copy, sends neither. The three partitions have one leader,
// so their batches may share requests (kafkago.RequestBatches at most to a
// request). The bounds assume catchup's defaults (compression none).
func TestReplicatedRequests(t *testing.T) {
	e := needBrokers(t)
	r := needReplicated(t)
	srcDir := needDataDir(t, e.source)
	dstDirs := []string{r.Node(1), r.Node(2), r.Node(3)}
	ctx := testContext(t, 2*time.Minute)
	const (
		parts     = 3
		perPart   = 3000
		value     = 1000
		seedBatch = 16 << 10
	)
	topic := uniqueTopic("requests")
	createTopic(ctx, t, e.source.brokers, topic, parts)
	r.CreateAssigned(ctx, t, topic, parts)
	seeded := makeRecords(topic, parts, perPart, value)
	// uncompressed, as the target gets them (compression: none, the
	// default): a fetch then holds at most fetch_bytes of the records
	var all []*kgo.Record
	for _, rs := range seeded {
		all = append(all, rs...)
	}
	cl := newClient(t, e.source.brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(seedBatch),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := cl.ProduceSync(ctx, all...).FirstErr(); err != nil {
		t.Fatalf("seed %d records: %v", len(all), err)
	}

	// Each partition's bytes bound its batches from below: one produce
	// batch holds at most batch_bytes of them, one fetch at most
	// fetch_bytes (keys and values only: fewer bytes than on the wire); a
	// request carries a batch of each partition at most.
	// From above, with every header and 64 bytes a record for the framing
	// (more than on the wire): those bytes' worth of fetches and one more,
	// and at most two produce requests a fetch (a full one and a tail).
	var loBatches, hiProduce, loFetch, hiFetch int64
	for _, recs := range seeded {
		var least, most int64
		for _, rec := range recs {
			kv := int64(len(rec.Key) + len(rec.Value))
			least += kv
			most += kv + 64
			for _, h := range rec.Headers {
				most += int64(len(h.Key) + len(h.Value))
			}
		}
		fetches := ceilDiv(most, config.DefaultFetchBytes) + 1
		loBatches += ceilDiv(least, config.DefaultBatchBytes)
		hiProduce += 2 * fetches
		loFetch += ceilDiv(least, config.DefaultFetchBytes)
		hiFetch += fetches
	}
	loProduce := ceilDiv(loBatches, int64(min(parts, kafkago.RequestBatches)))

	s := spec{
		store:  t.TempDir(),
		name:   "requests",
		source: plaintext("it-source", e.source.brokers),
		target: plaintext("it-replicated", r.Brokers),
		topic:  topic,
	}
	run := func(what string) (src, dst requests) {
		t.Helper()
		pl := open(ctx, t, s, pipeline.Options{})
		defer pl.Close()
		src0, dst0 := brokerRequests(ctx, t, srcDir), brokerRequests(ctx, t, dstDirs...)
		rep, err := pl.Engine.Run(ctx)
		requireDone(t, what, rep, err)
		src, dst = brokerRequests(ctx, t, srcDir).minus(src0), brokerRequests(ctx, t, dstDirs...).minus(dst0)
		t.Logf("%s: target %v; source %v", what, dst, src)
		return src, dst
	}

	src, dst := run("the copy")
	if got := dst["Produce"]; got < loProduce || got > hiProduce {
		t.Errorf("the copy of %d records sent %d produce requests to the target, want %d to %d", parts*perPart, got, loProduce, hiProduce)
	}
	if got := src["Fetch"] - src["FetchFollower"]; got < loFetch || got > hiFetch {
		t.Errorf("the copy of %d records sent %d fetches to the source, want %d to %d", parts*perPart, got, loFetch, hiFetch)
	}

	src, dst = run("a run with nothing new")
	if got := dst["Produce"]; got != 0 {
		t.Errorf("a run with nothing new sent %d produce requests to the target, want 0", got)
	}
	if got := src["Fetch"] - src["FetchFollower"]; got != 0 {
		t.Errorf("a run with nothing new sent %d fetches to the source, want 0", got)
	}
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
