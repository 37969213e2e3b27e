package worker

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

func TestDecodeEvent(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, payload string
		want          Event
		wantErr       string
	}{
		{name: "pipeline", payload: `{"pipeline":"p"}`, want: Event{Pipeline: "p"}},
		{name: "shard", payload: `{"pipeline":"p","partitions":[{"topic":"t","partition":3}]}`,
			want: Event{Pipeline: "p", Partitions: []Partition{{Topic: "t", Partition: 3}}}},
		{name: "job", payload: `{"pipeline":"p","job":{"name":"j","from":"2026-05-01T00:00:00Z"}}`,
			want: Event{Pipeline: "p", Job: &Job{Name: "j", From: from}}},
		{name: "unknown field", payload: `{"pipeline":"p","partition":[]}`, wantErr: `unknown field "partition"`},
		{name: "wrong type", payload: `{"pipeline":3}`, wantErr: "cannot unmarshal number"},
		{name: "trailing data", payload: `{"pipeline":"p"} {}`, wantErr: "data after the JSON object"},
		{name: "no pipeline", payload: `{}`, wantErr: `"pipeline" is required`},
		{name: "partition twice", payload: `{"pipeline":"p","partitions":[{"topic":"t","partition":1},{"topic":"t","partition":1}]}`,
			wantErr: "t/1 is named twice"},
		{name: "job without start", payload: `{"pipeline":"p","job":{"name":"j"}}`, wantErr: `a job needs "name" and "from"`},
		{name: "job ends before it starts", payload: `{"pipeline":"p","job":{"name":"j","from":"2026-05-01T00:00:00Z","to":"2026-04-01T00:00:00Z"}}`,
			wantErr: "is not after from"},
		{name: "not JSON", payload: `pipeline: p`, wantErr: "decode event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeEvent([]byte(tt.payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DecodeEvent(%s) = %v, want an error containing %q", tt.payload, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeEvent(%s): %v", tt.payload, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeEvent(%s) (-want +got):\n%s", tt.payload, diff)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("produce t/0 at offset 5: %w", catchup.ErrRetriable), true},
		{fmt.Errorf("produce t/0: %w", catchup.ErrUnknownOutcome), true},
		{fmt.Errorf("fetch: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{&catchup.GapError{From: 1, To: 5}, false},
		{fmt.Errorf("t/0: %w", catchup.ErrTopicRecreated), false},
		{errors.New("target partition t/0 ends at 3, below the end 7 recorded at the last commit"), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
