package replicate

import (
	stdcmp "cmp"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// callLog records the lease and checkpoint writes a run sends to its store,
// in order: "acquire", "renew", "commit", "commit+release", "release".
type callLog struct {
	checkpoint.Store
	fence bool // every commit fails with checkpoint.ErrFenced, unwritten
	mu    sync.Mutex
	calls []string
}

func (s *callLog) add(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func (s *callLog) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	s.add("acquire")
	return s.Store.Acquire(ctx, pipeline, p, owner, ttl)
}

func (s *callLog) Renew(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	s.add("renew")
	return s.Store.Renew(ctx, l, ttl)
}

func (s *callLog) Commit(ctx context.Context, l checkpoint.Lease, c checkpoint.Commit) error {
	if c.Release {
		s.add("commit+release")
	} else {
		s.add("commit")
	}
	if s.fence {
		return fmt.Errorf("lease taken by another run: %w", checkpoint.ErrFenced)
	}
	return s.Store.Commit(ctx, l, c)
}

func (s *callLog) Release(ctx context.Context, l checkpoint.Lease) error {
	s.add("release")
	return s.Store.Release(ctx, l)
}

// TestStoreWritesOfEachPath pins, for each path through the copy's states
// (doc.go), the store writes of one run of one partition under a clock that
// does not move (no renew, no interval commit): where the lease is
// released (by the last commit, or by a release of its own when that
// commit has nothing to write) and where it is kept (in doubt), and that
// the commit the anchor check holds back is made once, on the first batch.
func TestStoreWritesOfEachPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int                        // records in the source partition; 10 when 0
		setup  func(t *testing.T, r *rig) // before the run
		policy func(o *Options)
		fence  bool // the store fences every commit
		status Status
		err    error // wrapped by the result's error, if set
		want   []string
	}{{
		// leased → planned → copying (commit before producing) → released.
		name:   "new partition copied",
		status: StatusDone,
		want:   []string{"acquire", "commit", "commit+release"},
	}, {
		// leased → planned → anchoring → copying → released: the first
		// batch passes the anchor check, with nothing new to commit, and
		// the second batch commits nothing either until the last commit.
		name: "resumed: the anchor check rides on the first fetch",
		size: 5,
		setup: func(t *testing.T, r *rig) {
			r.run(t, t.Context(), r.options("first"))
			r.appendRecords(pA, 4)
		},
		status: StatusDone,
		want:   []string{"acquire", "commit+release"},
	}, {
		// leased, the plan fails: no checkpoint for a partition that never
		// committed, and the lease is released on its own.
		name: "new partition, plan fails",
		setup: func(t *testing.T, r *rig) {
			r.src.logs[pA].start, r.src.logs[pA].recs = 4, r.src.logs[pA].recs[4:]
		},
		policy: func(o *Options) { o.Policy.StartOffsets = map[catchup.Partition]int64{pA: 2} },
		status: StatusFailed,
		want:   []string{"acquire", "release"},
	}, {
		// taken_over → in_doubt → anchoring → copying → released.
		name:   "taken over, settled",
		setup:  func(t *testing.T, r *rig) { r.deadRunAt4(t) },
		status: StatusDone,
		want:   []string{"acquire", "commit+release"},
	}, {
		// taken_over → in_doubt → anchoring, and the anchor check fails:
		// a takeover checks the anchor like any resumed run.
		name: "taken over, source topic recreated",
		setup: func(t *testing.T, r *rig) {
			r.deadRunAt4(t)
			fresh := newFakeCluster(map[catchup.Partition]int{pA: 15}).logs[pA]
			for i := range fresh.recs {
				fresh.recs[i].Value = []byte("new topic")
			}
			r.src.logs[pA] = fresh
		},
		status: StatusFailed,
		err:    catchup.ErrTopicRecreated,
		want:   []string{"acquire", "commit+release"},
	}, {
		// leased → copying, and the commit before producing is fenced:
		// no last commit; the release is tried (and refused by a store
		// that fenced the lease).
		name:   "fenced",
		fence:  true,
		status: StatusFenced,
		err:    checkpoint.ErrFenced,
		want:   []string{"acquire", "commit", "release"},
	}, {
		// taken_over, the plan fails: still in doubt, so the last commit
		// records the error and keeps the lease for the next run to settle.
		name: "taken over, plan fails",
		setup: func(t *testing.T, r *rig) {
			r.deadRunAt4(t)
			r.src.logs[pA].start, r.src.logs[pA].recs = 7, r.src.logs[pA].recs[7:] // retention passed the checkpoint
		},
		status: StatusFailed,
		want:   []string{"acquire", "commit"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: stdcmp.Or(tc.size, 10)})
			if tc.setup != nil {
				tc.setup(t, r)
			}
			log := &callLog{Store: r.store, fence: tc.fence}
			o := r.options("run")
			o.Store = log
			if tc.policy != nil {
				tc.policy(&o)
			}
			res := r.run(t, t.Context(), o).Partitions[0]
			if res.Status != tc.status {
				t.Errorf("status %s err %v, want %s", res.Status, res.Err, tc.status)
			}
			if tc.err != nil && !errors.Is(res.Err, tc.err) {
				t.Errorf("err %v, want one wrapping %v", res.Err, tc.err)
			}
			if diff := cmp.Diff(tc.want, log.calls); diff != "" {
				t.Errorf("store writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDocDrawsTheStateMachine keeps doc.go true: the diagram draws exactly
// the transitions copyState.may allows, every drawn edge is listed with at
// least one test, and every test the list names exists.
func TestDocDrawsTheStateMachine(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]copyState{}
	for s := stateLeased; s <= stateReleased; s++ {
		states[s.String()] = s
	}
	edge := regexp.MustCompile(`^//\t    (\S+) --> ([^\s:]+)`)
	item := regexp.MustCompile(`^//   - (\S+) → (\S+): (.+)$`)
	drawn, listed := map[string]bool{}, map[string][]string{}
	for line := range strings.Lines(string(doc)) {
		line = strings.TrimRight(line, "\n")
		if m := edge.FindStringSubmatch(line); m != nil {
			drawn[m[1]+" → "+m[2]] = true
			for _, name := range m[1:3] {
				if _, ok := states[name]; !ok && name != "[*]" {
					t.Errorf("doc.go draws state %q, which copyState does not have", name)
				}
			}
		}
		if m := item.FindStringSubmatch(line); m != nil {
			listed[m[1]+" → "+m[2]] = regexp.MustCompile(`Test\w+`).FindAllString(m[3], -1)
		}
	}
	for from, fs := range states {
		for to, ts := range states {
			if fs.may(ts) != drawn[from+" → "+to] {
				t.Errorf("%s → %s: copyState.may says %v, doc.go draws it: %v", from, to, fs.may(ts), drawn[from+" → "+to])
			}
		}
	}
	tests := testFuncs(t)
	for e := range drawn {
		if len(listed[e]) == 0 {
			t.Errorf("doc.go draws %s but names no test for it", e)
		}
	}
	for e, names := range listed {
		for _, n := range names {
			if !tests[n] {
				t.Errorf("doc.go names %s for %s; no such test in package replicate", n, e)
			}
		}
	}
	if len(drawn) == 0 || len(listed) == 0 {
		t.Fatalf("doc.go: %d edges drawn, %d listed; the diagram or the list was not found", len(drawn), len(listed))
	}
}

// testFuncs returns the names of the Test functions of this package.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] = true
			}
		}
	}
	return out
}
