package groupsync

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// fakeSource is the source's group API: committed offsets by group.
type fakeSource map[string]map[catchup.Partition]int64

func (s fakeSource) ListGroups(context.Context) ([]string, error) {
	var out []string
	for g := range s {
		out = append(out, g)
	}
	return out, nil
}

func (s fakeSource) CommittedOffsets(_ context.Context, g string) (map[catchup.Partition]int64, error) {
	return s[g], nil
}

// fakeTarget holds, per target partition, copies of source offsets: copy i
// is at target offset i + shift (records of other origins came first).
type fakeTarget struct {
	copies    map[catchup.Partition]int64 // source offsets [0, n) copied
	shift     int64
	active    map[string]bool
	committed map[string]map[catchup.Partition]int64
	refuse    error
}

func (f *fakeTarget) Fetch(_ context.Context, p catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	end := f.copies[p] + f.shift
	var out catchup.Fetched
	for off := max(from, f.shift); off < end && len(out.Records) < 3; off++ {
		v := catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: p, Offset: off - f.shift})
		out.Records = append(out.Records, catchup.Record{Offset: off, Headers: []catchup.Header{{Key: catchup.ProvenanceHeader, Value: v}}})
	}
	out.Next = from
	if n := len(out.Records); n > 0 {
		out.Next = out.Records[n-1].Offset + 1
	} else if from < f.shift {
		out.Next = f.shift
	}
	return out, nil
}

func (f *fakeTarget) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	var out []catchup.Offsets
	for _, p := range ps {
		end := f.copies[p] + f.shift
		out = append(out, catchup.Offsets{Partition: p, HighWatermark: end, LastStable: end})
	}
	return out, nil
}

func (f *fakeTarget) GroupActive(_ context.Context, g string) (bool, error) { return f.active[g], nil }

func (f *fakeTarget) CommittedOffsets(_ context.Context, g string) (map[catchup.Partition]int64, error) {
	return f.committed[g], nil
}

func (f *fakeTarget) CommitOffsets(_ context.Context, g string, offs map[catchup.Partition]int64) error {
	if f.refuse != nil {
		return f.refuse
	}
	if f.committed[g] == nil {
		f.committed[g] = map[catchup.Partition]int64{}
	}
	for p, o := range offs {
		f.committed[g][p] = o
	}
	return nil
}

// TestSync pins every outcome of a partition and a group: synced at the
// translated offset (shifted by records of other origins on the target),
// in sync, skipped behind the copy, skipped never backwards, a group active
// on the target, a group not selected, and a commit the coordinator refuses.
func TestSync(t *testing.T) {
	p := func(n int32) catchup.Partition { return catchup.Partition{Topic: "t", Partition: n} }
	src := fakeSource{
		"app":   {p(0): 5, p(1): 10, p(2): 8, p(3): 2, {Topic: "other", Partition: 0}: 1},
		"busy":  {p(0): 1},
		"audit": {p(0): 1},
		"stuck": {p(0): 3},
	}
	dst := &fakeTarget{
		copies: map[catchup.Partition]int64{p(0): 10, p(1): 10, p(2): 5, p(3): 10},
		shift:  100,
		active: map[string]bool{"busy": true},
		committed: map[string]map[catchup.Partition]int64{
			"app": {p(1): 110, p(3): 150},
		},
	}
	o := Options{Cluster: "src", Group: func(g string) bool { return g != "audit" }, Topic: func(t string) bool { return t == "t" }}
	got, err := Sync(t.Context(), src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Group  string
		Part   int32
		Status Status
		Offset int64
	}
	var rows []row
	skipped := map[string]string{}
	for _, g := range got {
		skipped[g.Group] = g.Skipped
		for _, pp := range g.Partitions {
			rows = append(rows, row{g.Group, pp.Partition, pp.Status, pp.Offset})
		}
	}
	sortRows := cmp.Transformer("sort", func(in []row) map[string]row {
		out := map[string]row{}
		for _, r := range in {
			out[r.Group+"/"+string(rune('0'+r.Part))] = r
		}
		return out
	})
	want := []row{
		{"app", 0, StatusSynced, 105},
		{"app", 1, StatusInSync, 110},
		{"app", 2, StatusSkipped, -1},  // the copy is at 5, the group at 8
		{"app", 3, StatusSkipped, 102}, // the target group is at 150
		{"busy", 0, StatusSkipped, -1},
		{"stuck", 0, StatusSynced, 103},
	}
	if diff := cmp.Diff(want, rows, sortRows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if skipped["busy"] == "" || skipped["app"] != "" {
		t.Errorf("group skips %v; want busy skipped (active on the target), app not", skipped)
	}
	if diff := cmp.Diff(map[catchup.Partition]int64{p(0): 105, p(1): 110, p(3): 150}, dst.committed["app"]); diff != "" {
		t.Errorf("app on the target (-want +got):\n%s", diff)
	}

	// A refused commit is the group's error; its partitions are skipped.
	dst.refuse = errors.New("UNKNOWN_MEMBER_ID")
	src["late"] = map[catchup.Partition]int64{p(0): 7}
	got, err = Sync(t.Context(), src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if g.Group == "late" && (g.Error != "UNKNOWN_MEMBER_ID" || g.Partitions[0].Status != StatusSkipped || g.Partitions[0].Reason != "commit refused") {
			t.Errorf("late with a refused commit: %+v; want the error and the partition skipped", g)
		}
	}
}
