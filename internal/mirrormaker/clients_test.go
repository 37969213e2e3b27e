package mirrormaker

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/config"
)

func TestDataLoss(t *testing.T) {
	const async = "producer.type=async\nqueue.enqueue.timeout.ms=0\n"
	tests := []struct {
		name, producer string
		fl             Flags
		wantErr        bool
		wantAcks       string
		key            string
		want           string
	}{
		{"acks 0 refused", "acks=0\n", Flags{}, true, "", "acks", "refused: acks=0 can lose records silently: the producer never learns " +
			"whether a write arrived, yet the checkpoint would move past it; use acks=all (catchup's default), or pass --allow-data-loss to accept the loss"},
		{"acks 0 allowed", "acks=0\n", Flags{AllowDataLoss: true}, false, "none", "acks", "warning: → producer.acks: none and " +
			"producer.allow_data_loss: true (--allow-data-loss): records lost on the way to the target are never noticed, and the checkpoint moves past them"},
		{"request.required.acks 1", "request.required.acks=1\n", Flags{}, false, "leader", "request.required.acks", "mapped: → producer.acks: leader"},
		{"acks wins", "acks=all\nrequest.required.acks=0\n", Flags{}, false, "all", "request.required.acks",
			"not applicable: the old producer's name for acks, which is also set and wins, as in the Java producer"},
		{"drop when full refused", async, Flags{}, true, "all", "queue.enqueue.timeout.ms", "refused: 0 tells the old async producer to drop " +
			"records when its queue is full, so MirrorMaker could lose records silently with this file (check the target with catchup verify); " +
			"catchup never drops records, it waits for the target: remove the key to accept that, or pass --allow-data-loss"},
		{"drop when full allowed", async, Flags{AllowDataLoss: true}, false, "all", "queue.enqueue.timeout.ms", "warning: 0 tells the old " +
			"async producer to drop records when its queue is full (accepted with --allow-data-loss); catchup never drops records, it waits for the target"},
		{"sync producer queue", "queue.enqueue.timeout.ms=0\n", Flags{}, false, "all", "queue.enqueue.timeout.ms",
			"not applicable: used only with producer.type=async"},
		{"abort.on.send.failure false", "", Flags{AbortOnSendFailure: "false"}, true, "all", "--abort.on.send.failure",
			"refused: false made MirrorMaker skip records it failed to send and commit past them, losing them; catchup never skips: " +
				"it stops the partition and keeps its checkpoint before them. Drop the flag to accept that, or pass --allow-data-loss"},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer, plainProducer+tt.producer, tt.fl)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Contains(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if err == nil {
			w := m.File.Pipelines[0].Producer
			if w.Acks != tt.wantAcks || w.AllowDataLoss != (tt.wantAcks == "none") {
				t.Errorf("%s: acks %q allow_data_loss %v, want %q", tt.name, w.Acks, w.AllowDataLoss, tt.wantAcks)
			}
		}
	}
}

func TestProducerValues(t *testing.T) {
	m, err := convert(t, plainConsumer, plainProducer+"compression.codec=4\nretries=0\nmax.request.size=5000000\nrequest.timeout.ms=15000\n", Flags{})
	if err != nil {
		t.Fatal(err)
	}
	w := m.File.Pipelines[0].Producer
	if w.Compression != "zstd" || w.Retries != 0 || w.BatchBytes != config.MaxBatchBytes || w.Timeout.Seconds() != 15 {
		t.Errorf("producer = %+v, want zstd, 0 retries (kept through the YAML), %d batch bytes, 15s", w, config.MaxBatchBytes)
	}
	if !strings.Contains(string(m.YAML), "retries: 0") {
		t.Errorf("YAML lacks retries: 0:\n%s", m.YAML)
	}
}

// TestCompressionLevel: compression.gzip.level and compression.zstd.level
// become producer.compression_level when compression.type (or the old
// compression.codec) names their codec, in either order in the file, and
// are not applicable otherwise, as the Java producer ignores them.
func TestCompressionLevel(t *testing.T) {
	tests := []struct {
		name, producer, key string
		wantErr             bool
		level               int
		want                string
	}{
		{"zstd", "compression.type=zstd\ncompression.zstd.level=1\n", "compression.zstd.level", false, 1,
			"mapped: → producer.compression_level: 1"},
		{"level before the codec", "compression.gzip.level=9\ncompression.type=gzip\n", "compression.gzip.level", false, 9,
			"mapped: → producer.compression_level: 9"},
		{"old codec number", "compression.codec=4\ncompression.zstd.level=19\n", "compression.zstd.level", false, 19,
			"mapped: → producer.compression_level: 19"},
		{"another codec", "compression.type=zstd\ncompression.gzip.level=9\n", "compression.gzip.level", false, 0,
			"not applicable: the level of gzip, and the producer compresses with zstd (compression.type): the Java producer ignored it too"},
		{"no codec", "compression.zstd.level=5\n", "compression.zstd.level", false, 0,
			"not applicable: the level of zstd, and the producer compresses with none (compression.type): the Java producer ignored it too"},
		{"gzip default", "compression.type=gzip\ncompression.gzip.level=-1\n", "compression.gzip.level", false, 0,
			"mapped: gzip's default level: producer.compression_level stays 0, the codec's default (6)"},
		{"zstd fast mode", "compression.type=zstd\ncompression.zstd.level=-7\n", "compression.zstd.level", false, 1,
			"warning: → producer.compression_level: 1, catchup's fastest zstd level: zstd's levels below 1 (zstd's fast modes) " +
				"are not offered, and level 1 compresses more, at more CPU"},
		{"out of range", "compression.type=zstd\ncompression.zstd.level=23\n", "compression.zstd.level", true, 0,
			`invalid: "23" is not a zstd level: use 1 to 22`},
		// The Java producer refuses gzip levels 0 and below -1.
		{"gzip 0", "compression.type=gzip\ncompression.gzip.level=0\n", "compression.gzip.level", true, 0,
			`invalid: "0" is not a gzip level: use 1 to 9`},
		{"gzip -2", "compression.type=gzip\ncompression.gzip.level=-2\n", "compression.gzip.level", true, 0,
			`invalid: "-2" is not a gzip level: use 1 to 9`},
		{"lz4", "compression.type=lz4\ncompression.lz4.level=9\n", "compression.lz4.level", false, 0,
			"not applicable: catchup compresses lz4 at its codec's only level (producer.compression_level is for gzip and zstd)"},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer, plainProducer+tt.producer, Flags{})
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Contains(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if err != nil {
			continue
		}
		if got := m.File.Pipelines[0].Producer.CompressionLevel; got != tt.level {
			t.Errorf("%s: producer.compression_level %d, want %d", tt.name, got, tt.level)
		}
		if line := fmt.Sprintf("compression_level: %d", tt.level); tt.level != 0 && !strings.Contains(string(m.YAML), line) {
			t.Errorf("%s: the YAML lacks %q:\n%s", tt.name, line, m.YAML)
		}
	}
}
