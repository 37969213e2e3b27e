package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

func TestWindow(t *testing.T) {
	p := catchup.Partition{Topic: "orders", Partition: 2}
	marks := catchup.Offsets{Partition: p, LogStart: 100, HighWatermark: 500, LastStable: 450}
	at := func(next int64) catchup.Progress {
		return catchup.Progress{Exists: true, Next: next}
	}
	tests := []struct {
		name     string
		cp       catchup.Progress
		pol      Policy
		from, to int64
		gap      bool
		err      error
	}{
		{name: "new partition starts at the log start", pol: Policy{}, from: 100, to: 500},
		{name: "read committed ends at the last stable offset", pol: Policy{ReadCommitted: true}, from: 100, to: 450},
		{name: "latest starts at the end", pol: Policy{Start: Latest}, from: 500, to: 500},
		{name: "latest under read committed", pol: Policy{Start: Latest, ReadCommitted: true}, from: 450, to: 450},
		{name: "explicit start offset wins", pol: Policy{Start: Latest, StartOffsets: map[catchup.Partition]int64{p: 300}}, from: 300, to: 500},
		{name: "checkpoint wins over start offsets", cp: at(200), pol: Policy{StartOffsets: map[catchup.Partition]int64{p: 300}}, from: 200, to: 500},
		{name: "checkpoint at the end gives an empty window", cp: at(500), from: 500, to: 500},
		{name: "checkpoint between LSO and HWM under read committed is empty", cp: at(470), pol: Policy{ReadCommitted: true}, from: 470, to: 470},
		{name: "max records caps the window", cp: at(200), pol: Policy{MaxRecords: 50}, from: 200, to: 250},
		{name: "max records larger than the backlog", cp: at(480), pol: Policy{MaxRecords: 50}, from: 480, to: 500},
		{name: "stop offset caps the window", cp: at(200), pol: Policy{StopOffsets: map[catchup.Partition]int64{p: 300}}, from: 200, to: 300},
		{name: "stop offset below the checkpoint gives an empty window", cp: at(200), pol: Policy{StopOffsets: map[catchup.Partition]int64{p: 150}}, from: 200, to: 200},
		{name: "gap fails by default, its window whole", cp: at(40), from: 40, to: 500, gap: true, err: &catchup.GapError{}},
		{name: "gap skipped", cp: at(40), pol: Policy{SkipGaps: true}, from: 100, to: 500, gap: true},
		{name: "explicit start below log start is a gap", pol: Policy{StartOffsets: map[catchup.Partition]int64{p: 7}}, from: 7, to: 500, gap: true, err: &catchup.GapError{}},
		{name: "checkpoint above the log end: topic recreated", cp: at(900), from: 900, to: 900, err: catchup.ErrTopicRecreated},
		{name: "explicit start above the log end", pol: Policy{StartOffsets: map[catchup.Partition]int64{p: 501}}, from: 501, to: 501, err: errors.New("above the source log end")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Window(marks, tt.cp, tt.pol)
			if got.From != tt.from || got.To != tt.to || got.Partition != p {
				t.Errorf("Window(%+v, %+v) = %v; want %v [%d,%d)", marks, tt.pol, got.Window, p, tt.from, tt.to)
			}
			if (got.Gap != nil) != tt.gap {
				t.Errorf("Window gap = %v, want gap %v", got.Gap, tt.gap)
			}
			if got.Gap != nil && (got.Gap.From != tt.cp.Next && got.Gap.From != 7 || got.Gap.To != 100) {
				t.Errorf("Window gap = [%d,%d), want it to end at the log start 100", got.Gap.From, got.Gap.To)
			}
			switch want := tt.err.(type) {
			case nil:
				if got.Err != nil {
					t.Errorf("Window err = %v, want nil", got.Err)
				}
			case *catchup.GapError:
				var ge *catchup.GapError
				if !errors.As(got.Err, &ge) {
					t.Errorf("Window err = %v, want a *catchup.GapError", got.Err)
				}
			default:
				if got.Err == nil || (!errors.Is(got.Err, want) && !strings.Contains(got.Err.Error(), want.Error())) {
					t.Errorf("Window err = %v, want %v", got.Err, want)
				}
			}
		})
	}
}

func TestWindowsKeepsOrder(t *testing.T) {
	marks := []catchup.Offsets{
		{Partition: catchup.Partition{Topic: "b", Partition: 1}, HighWatermark: 10, LastStable: 10},
		{Partition: catchup.Partition{Topic: "a", Partition: 0}, HighWatermark: 5, LastStable: 5},
	}
	cps := map[catchup.Partition]catchup.Progress{
		{Topic: "a", Partition: 0}: {Exists: true, Next: 3},
	}
	got := Windows(marks, cps, Policy{})
	if len(got) != 2 || got[0].Topic != "b" || got[0].From != 0 || got[0].To != 10 || got[1].From != 3 || got[1].To != 5 {
		t.Errorf("Windows = %+v; want b/1 [0,10) then a/0 [3,5)", got)
	}
}

// TestRecreatedHintNamesThePipeline pins the reset command the recreated-topic
// error suggests: reset refuses to run without --pipeline.
func TestRecreatedHintNamesThePipeline(t *testing.T) {
	p := catchup.Partition{Topic: "orders", Partition: 2}
	marks := catchup.Offsets{Partition: p, HighWatermark: 500, LastStable: 500}
	cp := catchup.Progress{Exists: true, Next: 900}
	for _, tc := range []struct {
		name, pipeline, want string
	}{
		{name: "named", pipeline: "eu", want: "`catchup reset --pipeline eu --topic orders --to earliest --allow-duplicates`"},
		{name: "unnamed", want: "`catchup reset --pipeline NAME --topic orders --to earliest --allow-duplicates`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := Window(marks, cp, Policy{Pipeline: tc.pipeline})
			if pl.Err == nil || !strings.Contains(pl.Err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %s", pl.Err, tc.want)
			}
		})
	}
}
