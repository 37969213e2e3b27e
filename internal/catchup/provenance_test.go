package catchup

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestProvenanceRoundTrip(t *testing.T) {
	for _, pv := range []Provenance{
		{Cluster: "eu-prod", Partition: Partition{"orders", 3}, Offset: 1842},
		{Cluster: "a.b_c-d", Partition: Partition{"x.y_z", 0}, Offset: 0},
		{Cluster: "c", Partition: Partition{"t", 2147483647}, Offset: 9223372036854775807},
	} {
		v := AppendProvenance(nil, pv)
		got, err := ParseProvenance(v)
		if err != nil || got != pv {
			t.Errorf("ParseProvenance(%q) = %+v, %v; want %+v", v, got, err, pv)
		}
	}
	if v := AppendProvenance(nil, Provenance{"eu-prod", Partition{"orders", 3}, 1842}); string(v) != "v1:eu-prod:orders:3:1842" {
		t.Errorf("AppendProvenance = %q, want v1:eu-prod:orders:3:1842", v)
	}
}

func TestParseProvenanceRejects(t *testing.T) {
	for _, v := range []string{"", "v2:c:t:0:1", "v1:c:t:0", "v1:c:t:x:1", "v1:c:t:0:y", "v1:c:t:0:1:extra"} {
		if _, err := ParseProvenance([]byte(v)); err == nil {
			t.Errorf("ParseProvenance(%q) = nil error, want an error", v)
		}
	}
}

func TestSourceOffset(t *testing.T) {
	p := Partition{"orders", 3}
	r := Record{Headers: []Header{
		{Key: "app", Value: []byte("x")},
		{Key: ProvenanceHeader, Value: AppendProvenance(nil, Provenance{"other", p, 7})},
		{Key: ProvenanceHeader, Value: AppendProvenance(nil, Provenance{"src", p, 42})},
	}}
	if off, ok := SourceOffset(&r, "src", p); !ok || off != 42 {
		t.Errorf("SourceOffset(src) = %d, %v; want 42, true", off, ok)
	}
	if _, ok := SourceOffset(&r, "src", Partition{"orders", 4}); ok {
		t.Errorf("SourceOffset(other partition) found a match")
	}
	if _, ok := SourceOffset(&Record{}, "src", p); ok {
		t.Errorf("SourceOffset(no headers) found a match")
	}
}

func TestCopiedWith(t *testing.T) {
	r := Record{Headers: []Header{{Key: "x", Value: []byte("v1:dst:t:0:1")},
		{Key: ProvenanceHeader, Value: AppendProvenance(nil, Provenance{"east", Partition{"t", 0}, 5})}}}
	if !CopiedWith(&r, CopiedPrefix("east")) || CopiedWith(&r, CopiedPrefix("dst")) || CopiedWith(&Record{}, CopiedPrefix("east")) {
		t.Errorf("CopiedWith: want true only for the cluster named in a %s header", ProvenanceHeader)
	}
}

// TestCopiedWithBoundaries: a header value shorter than the prefix, equal
// to it, one character off, or another version is no copy from the cluster.
func TestCopiedWithBoundaries(t *testing.T) {
	tests := []struct {
		value, cluster string
		want           bool
	}{
		{"", "east", false}, {"v1", "east", false}, {"v1:", "east", false}, {"v1:eas", "east", false},
		{"v1:east", "east", false}, {"v1:east:", "east", true}, {"v1:east:t", "east", true},
		{"v1:east:t:0:5", "east", true}, {"v1:easter:t:0:5", "east", false}, {"v2:east:t:0:5", "east", false},
		{"v1:eas:t:0:5", "east", false}, {"v1:east;t:0:5", "east", false},
		{"v1:east:t:0:5", "eas", false}, {"v1:eas:t:0:5", "eas", true},
		{"v1::t:0:5", "", true}, {"v1:east:t:0:5", "", false},
	}
	for _, tt := range tests {
		for _, key := range []string{ProvenanceHeader, "other"} {
			r := Record{Headers: []Header{{Key: "a", Value: nil}, {Key: key, Value: []byte(tt.value)}}}
			want := tt.want && key == ProvenanceHeader
			if got := CopiedWith(&r, CopiedPrefix(tt.cluster)); got != want {
				t.Errorf("header %s=%q, cluster %q: CopiedWith = %t, want %t", key, tt.value, tt.cluster, got, want)
			}
		}
	}
}

// TestDecimalLen checks DecimalLen against strconv at both sides of every
// power of 10, at the ends of int64 and at random values of every length.
func TestDecimalLen(t *testing.T) {
	xs := []int64{0, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := int64(1); ; p *= 10 {
		xs = append(xs, p-1, p, p+1, -p+1, -p, -p-1)
		if p > math.MaxInt64/10 {
			break
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		x := r.Int64() >> r.IntN(64)
		xs = append(xs, x, -x)
	}
	for _, x := range xs {
		if got, want := DecimalLen(x), len(strconv.FormatInt(x, 10)); got != want {
			t.Errorf("DecimalLen(%d) = %d, want %d", x, got, want)
		}
	}
}

func TestProvenancePrefixLen(t *testing.T) {
	for _, part := range []int32{0, 9, 10, 2147483647, -1, math.MinInt32} {
		p := Partition{"orders.eu", part}
		if got, want := ProvenancePrefixLen(p, "eu-prod"), len(AppendProvenancePrefix(nil, p, "eu-prod")); got != want {
			t.Errorf("ProvenancePrefixLen(%v) = %d, want %d", p, got, want)
		}
	}
}

func BenchmarkProvenanceLen(b *testing.B) {
	pv := Provenance{Cluster: "onprem", Partition: Partition{"orders", 3}, Offset: 123456789}
	n := 0
	for b.Loop() {
		pv.Offset++
		n += ProvenanceLen(pv)
	}
	if n == 0 {
		b.Fatal("no length")
	}
}

func BenchmarkAppendProvenance(b *testing.B) {
	pv := Provenance{Cluster: "onprem", Partition: Partition{"orders", 3}, Offset: 123456789}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendProvenance(buf[:0], pv)
	}
}

func BenchmarkSourceOffset(b *testing.B) {
	p := Partition{"orders", 3}
	r := Record{Headers: []Header{{Key: "a", Value: []byte("x")}, {Key: ProvenanceHeader, Value: AppendProvenance(nil, Provenance{"onprem", p, 42})}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := SourceOffset(&r, "onprem", p); !ok {
			b.Fatal("not found")
		}
	}
}

// FuzzParseProvenance checks that any value either fails to parse or
// round-trips, and that SourceOffset agrees with ParseProvenance.
func FuzzParseProvenance(f *testing.F) {
	for _, s := range []string{"v1:eu-prod:orders:3:1842", "v1:c:t:0:0", "v1:::0:0", "v1:c:t:2147483648:1", "v1:c:t:1:9223372036854775808"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		pv, err := ParseProvenance(v)
		r := Record{Headers: []Header{{Key: ProvenanceHeader, Value: v}}}
		off, ok := SourceOffset(&r, pv.Cluster, pv.Partition)
		if err != nil {
			if ok {
				t.Errorf("SourceOffset(%q) found %d, but ParseProvenance failed: %v", v, off, err)
			}
			return
		}
		if !ok || off != pv.Offset {
			t.Errorf("SourceOffset(%q) = %d, %v; ParseProvenance gave %+v", v, off, ok, pv)
		}
		if n := ProvenanceLen(pv); n != len(AppendProvenance(nil, pv)) {
			t.Errorf("ProvenanceLen(%+v) = %d, AppendProvenance writes %d bytes", pv, n, len(AppendProvenance(nil, pv)))
		}
		if got := AppendProvenance(nil, pv); string(got) != string(v) && pv.Cluster != "" {
			// Leading zeros parse but do not round-trip; anything else must.
			if p2, err := ParseProvenance(got); err != nil || p2 != pv {
				t.Errorf("round trip of %q: %q parses to %+v, %v", v, got, p2, err)
			}
		}
	})
}

func TestProvenanceLen(t *testing.T) {
	for _, off := range []int64{0, 1, 9, 10, 99, 100, 1842, -1, -9, -10, -11, 1<<31 - 1, math.MaxInt64, math.MinInt64} {
		for _, part := range []int32{0, 7, 10, 2147483647, -1} {
			pv := Provenance{Cluster: "eu-prod", Partition: Partition{"orders", part}, Offset: off}
			if got, want := ProvenanceLen(pv), len(AppendProvenance(nil, pv)); got != want {
				t.Errorf("ProvenanceLen(%+v) = %d, want %d", pv, got, want)
			}
		}
	}
}
