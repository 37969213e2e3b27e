package catchup

import "testing"

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

func TestCopiedFrom(t *testing.T) {
	r := Record{Headers: []Header{{Key: "x", Value: []byte("v1:dst:t:0:1")},
		{Key: ProvenanceHeader, Value: AppendProvenance(nil, Provenance{"east", Partition{"t", 0}, 5})}}}
	if !CopiedFrom(&r, "east") || CopiedFrom(&r, "dst") || CopiedFrom(&Record{}, "east") {
		t.Errorf("CopiedFrom: want true only for the cluster named in a %s header", ProvenanceHeader)
	}
}
