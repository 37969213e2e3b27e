package e2e

import (
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestComparePartitionCatches checks the checker: every kind of bad copy
// is reported, with the offsets that locate it.
func TestComparePartitionCatches(t *testing.T) {
	p := catchup.Partition{Topic: "t", Partition: 1}
	src := []stored{
		{at: 0, rec: rec{Offset: 0, Key: nil, Value: []byte("a"), Timestamp: 1}},
		{at: 2, rec: rec{Offset: 2, Key: []byte{}, Value: nil, Timestamp: 2}},
		{at: 3, rec: rec{Offset: 3, Value: []byte{}, Headers: []catchup.Header{{Key: "h", Value: nil}}, Timestamp: 3}},
	}
	// copyOf returns s as catchup writes it to the target at offset at.
	copyOf := func(s stored, at int64) stored {
		r := s.rec
		r.Headers = append(append([]catchup.Header(nil), r.Headers...), catchup.Header{
			Key:   catchup.ProvenanceHeader,
			Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: srcName, Partition: p, Offset: s.rec.Offset}),
		})
		r.Offset = at
		return stored{at: at, rec: r}
	}
	exact := []stored{copyOf(src[0], 0), copyOf(src[1], 1), copyOf(src[2], 2)}
	if probs := comparePartition(p, src, exact, copySpec{}); len(probs) > 0 {
		t.Fatalf("exact copy: problems %q", probs)
	}
	mutate := func(i int, f func(*stored)) []stored {
		out := append([]stored(nil), exact...)
		s := out[i]
		s.rec.Headers = append([]catchup.Header(nil), s.rec.Headers...)
		f(&s)
		out[i] = s
		return out
	}
	for _, tc := range []struct {
		name string
		dst  []stored
		spec copySpec
		want string
	}{
		{"missing", exact[:2], copySpec{}, "missing, at source offsets [3]"},
		{"duplicated", append(exact[:3:3], copyOf(src[2], 3)), copySpec{}, "source offset 3: duplicated at target offsets [2 3]"},
		{"reordered", []stored{exact[0], copyOf(src[2], 1), copyOf(src[1], 2)}, copySpec{}, "source offset 2 after source offset 3"},
		{"null key became empty", mutate(0, func(s *stored) { s.rec.Key = []byte{} }), copySpec{}, "target offset 0 differs from source offset 0"},
		{"empty value became null", mutate(2, func(s *stored) { s.rec.Value = nil }), copySpec{}, "target offset 2 differs from source offset 3"},
		{"null header value became empty", mutate(2, func(s *stored) { s.rec.Headers[0].Value = []byte{} }), copySpec{}, "differs"},
		{"timestamp", mutate(1, func(s *stored) { s.rec.Timestamp++ }), copySpec{}, "differs"},
		{"no provenance", mutate(1, func(s *stored) { s.rec.Headers = nil }), copySpec{}, "target offset 1: no catchup-src header"},
		{"other partition", mutate(1, func(s *stored) {
			s.rec.Headers[0].Value = catchup.AppendProvenance(nil, catchup.Provenance{Cluster: srcName, Partition: catchup.Partition{Topic: "t"}, Offset: 2})
		}), copySpec{}, "provenance \"v1:src:t:0:2\""},
		{"outside the window", exact, copySpec{To: map[catchup.Partition]int64{p: 3}}, "source offset 3 is not expected"},
	} {
		probs := comparePartition(p, src, tc.dst, tc.spec)
		if !strings.Contains(strings.Join(probs, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one containing %q", tc.name, probs, tc.want)
		}
	}
}
