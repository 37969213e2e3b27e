package dynamostore

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
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

func TestVerificationItem(t *testing.T) {
	at := time.Date(2026, 11, 29, 18, 0, 0, 123e6, time.UTC)
	for _, v := range []checkpoint.Verification{
		{At: at, From: 3, To: 120, Source: 117, Matched: 110, Missing: 2, Duplicated: 3, Differing: 4, OutOfOrder: 1, First: "source offset 57: missing"},
		{At: at, From: 0, To: math.MaxInt64, Source: math.MaxInt64, Matched: math.MaxInt64}, // clean: first is left out
	} {
		item := map[string]types.AttributeValue{
			attrPartition:    str("orders#0000000000"),
			attrVerification: verificationValue(v),
		}
		if _, ok := item[attrVerification].(*types.AttributeValueMemberM).Value[verFirst]; ok != (v.First != "") {
			t.Errorf("verificationValue(%+v) has first: %v, want %v", v, ok, v.First != "")
		}
		cp, err := decode(item)
		if err != nil {
			t.Fatalf("decode of an item with verification %+v: %v", v, err)
		}
		if d := cmp.Diff(&v, cp.LastVerification); d != "" {
			t.Errorf("verification round trip mismatch (-want +got):\n%s", d)
		}
	}

	cp, err := decode(map[string]types.AttributeValue{attrPartition: str("orders#0000000000")})
	if err != nil || cp.LastVerification != nil {
		t.Errorf("decode of an item without verification = %+v, %v; want no verification", cp.LastVerification, err)
	}
	for name, bad := range map[string]types.AttributeValue{
		"not a map":     str("ok"),
		"bad count":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{verMissing: str("1")}},
		"bad first":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{verFirst: num(1)}},
		"bad timestamp": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{verAt: &types.AttributeValueMemberN{Value: "1.5"}}},
	} {
		item := map[string]types.AttributeValue{attrPartition: str("orders#0000000000"), attrVerification: bad}
		if _, err := decode(item); !errors.Is(err, errItem) || !strings.Contains(err.Error(), attrVerification) {
			t.Errorf("decode of a verification that is %s = %v, want an error wrapping %q naming %s", name, err, errItem, attrVerification)
		}
	}
}
