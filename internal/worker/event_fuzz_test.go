package worker

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeEvent decodes arbitrary Lambda payloads: DecodeEvent never
// panics, and an event it accepts keeps its promises (a pipeline, valid and
// distinct partitions, a job with a name and a start) and decodes to itself
// again once encoded, as the dispatcher encodes it.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"pipeline":"p"}`,
		`{"pipeline":"p","partitions":[{"topic":"t","partition":3},{"topic":"t","partition":4}]}`,
		`{"pipeline":"p","job":{"name":"j","from":"2026-05-01T00:00:00Z","to":"2026-05-02T00:00:00+02:00"}}`,
		`{"pipeline":"p","partitions":[{"topic":"t","partition":1},{"topic":"t","partition":1}]}`,
		`{"pipeline":"p"} {}`,
		`{"pipeline":"p","job":null,"partitions":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, err := DecodeEvent(payload)
		if err != nil {
			return
		}
		if ev.Pipeline == "" {
			t.Errorf("DecodeEvent(%q) accepted an event without a pipeline", payload)
		}
		seen := map[Partition]bool{}
		for _, p := range ev.Partitions {
			if p.Topic == "" || p.Partition < 0 || seen[p] {
				t.Errorf("DecodeEvent(%q) accepted partition %+v", payload, p)
			}
			seen[p] = true
		}
		if j := ev.Job; j != nil && (j.Name == "" || j.From.IsZero() || !j.To.IsZero() && !j.To.After(j.From)) {
			t.Errorf("DecodeEvent(%q) accepted job %+v", payload, *j)
		}
		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("encode %+v: %v", ev, err)
		}
		ev2, err := DecodeEvent(again)
		if err != nil {
			t.Fatalf("DecodeEvent(%s), the encoding of an accepted event: %v", again, err)
		}
		if diff := cmp.Diff(ev, ev2); diff != "" {
			t.Errorf("round trip of %q through %s (-first +second):\n%s", payload, again, diff)
		}
	})
}
