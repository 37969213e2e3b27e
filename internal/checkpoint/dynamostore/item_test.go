package dynamostore

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

func TestSortKey(t *testing.T) {
	tests := []struct {
		p    catchup.Partition
		want string
	}{
		{catchup.Partition{Topic: "orders", Partition: 0}, "orders#0000000000"},
		{catchup.Partition{Topic: "orders", Partition: 12}, "orders#0000000012"},
		{catchup.Partition{Topic: "a.b-c_D", Partition: math.MaxInt32}, "a.b-c_D#2147483647"},
		{catchup.Partition{Topic: "odd#name", Partition: 3}, "odd#name#0000000003"}, // not a Kafka name, still unambiguous
		{catchup.Partition{Topic: "", Partition: 1}, "#0000000001"},
	}
	for _, tt := range tests {
		got, err := sortKey(tt.p)
		if err != nil || got != tt.want {
			t.Errorf("sortKey(%v) = %q, %v; want %q", tt.p, got, err, tt.want)
			continue
		}
		back, err := parseSortKey(got)
		if err != nil || back != tt.p {
			t.Errorf("parseSortKey(%q) = %v, %v; want %v", got, back, err, tt.p)
		}
	}
	if _, err := sortKey(catchup.Partition{Topic: "orders", Partition: -1}); err == nil {
		t.Errorf("sortKey of partition -1: no error")
	}
	for _, bad := range []string{"", "orders", "orders#12", "orders#-000000001", "orders#99999999999", "orders#000000001x"} {
		if p, err := parseSortKey(bad); err == nil {
			t.Errorf("parseSortKey(%q) = %v, want an error", bad, p)
		}
	}
}

// TestSortKeyOrder checks that, for legal Kafka topic names, sort keys in
// byte order are partitions in Partition.Compare order.
func TestSortKeyOrder(t *testing.T) {
	topics := []string{"a", "a-b", "a.b", "a_b", "a0", "aa", "A", "Z9", "_x", "-", ".", "__consumer_offsets", "orders", "orders-eu"}
	var parts []catchup.Partition
	for _, topic := range topics {
		for _, n := range []int32{0, 1, 2, 9, 10, 11, 99, 100, 1000, math.MaxInt32} {
			parts = append(parts, catchup.Partition{Topic: topic, Partition: n})
		}
	}
	byKey := slices.Clone(parts)
	slices.SortFunc(byKey, func(a, b catchup.Partition) int {
		ka, _ := sortKey(a)
		kb, _ := sortKey(b)
		return strings.Compare(ka, kb)
	})
	byCompare := slices.Clone(parts)
	slices.SortFunc(byCompare, catchup.Partition.Compare)
	if !slices.Equal(byKey, byCompare) {
		t.Errorf("sort key order differs from Partition.Compare:\nkeys:    %v\ncompare: %v", byKey, byCompare)
	}
}

func TestNames(t *testing.T) {
	got := names("#next <= :next AND #next_x = :a", "SET #owner = :o")
	want := map[string]string{"#next": "next", "#owner": "owner"}
	if len(got) != len(want) || got["#next"] != "next" || got["#owner"] != "owner" {
		t.Errorf("names = %v, want %v", got, want)
	}
}
