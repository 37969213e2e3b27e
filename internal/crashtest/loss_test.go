package crashtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
)

// The store is a cache of what the target's provenance says (DESIGN.md,
// guarantee 2): these tests kill the real binary as the others do, and
// after a kill, at random, the checkpoint store is lost (the file store's
// folder removed; the DynamoDB table deleted and created again with
// `catchup init-store`) or rolled back to a snapshot taken after an earlier
// kill of the same test (the folder's files, the table's items). The next
// child must resume from what the target holds: 0 lost, 0 duplicated.

const (
	// envStoreLosses switches the losses off (0) or on (1, the default);
	// rollbacks always run. Off, only snapshots in which every partition
	// has a checkpoint are taken, since a snapshot without one is a loss
	// of that partition's checkpoint.
	envStoreLosses       = "CATCHUP_CRASH_STORE_LOSSES"
	storeLossesByDefault = true
)

func TestCrashStoreLossFile(t *testing.T) {
	crash(t, options{store: "file", provenance: true, kills: crashKills(t) / 5, rollbacks: true, losses: storeLosses(t)})
}

func TestCrashStoreLossDynamoDB(t *testing.T) {
	crash(t, options{store: "dynamodb", provenance: true, kills: crashKills(t) / 5, rollbacks: true, losses: storeLosses(t)})
}

// storeLosses reads envStoreLosses.
func storeLosses(t *testing.T) bool {
	s := os.Getenv(envStoreLosses)
	if s == "" {
		return storeLossesByDefault
	}
	on, err := strconv.ParseBool(s)
	if err != nil {
		t.Fatalf("%s=%q: want 1 or 0", envStoreLosses, s)
	}
	return on
}

// storeSnapshot is the whole content of the store at one moment: the file
// store's files by name, or the table's items.
type storeSnapshot struct {
	after int // kills before it was taken
	files map[string][]byte
	items []map[string]types.AttributeValue
}

// storeEvent, after a kill and while no child runs, takes a snapshot of
// the store one time in two, then loses the store or rolls it back to an
// earlier snapshot (one chosen at random among those taken after earlier
// kills) four times in five.
func (h *harness) storeEvent(ctx context.Context) {
	if !h.o.losses && !h.o.rollbacks {
		return
	}
	earlier := h.snapshots
	// Without losses the snapshots are only taken once every partition has
	// a checkpoint: one without is a loss of that partition's checkpoint.
	if h.rng.IntN(2) == 0 && (h.o.losses || h.allCheckpointed(ctx)) {
		h.snapshots = append(h.snapshots, h.snapshot(ctx))
	}
	if h.rng.IntN(5) == 0 {
		return
	}
	rollback := h.o.rollbacks && len(earlier) > 0 && (!h.o.losses || h.rng.IntN(2) == 0)
	switch {
	case rollback:
		s := earlier[h.rng.IntN(len(earlier))]
		h.restore(ctx, s)
		h.rollbacks++
		h.rolledBackKills += h.kills - s.after
	case h.o.losses:
		h.loseStore(ctx)
		h.losses++
	}
}

// allCheckpointed reports whether every partition has a checkpoint.
func (h *harness) allCheckpointed(ctx context.Context) bool {
	cps := h.checkpoints(ctx)
	for _, p := range allPartitions() {
		if !cps[p].Exists {
			return false
		}
	}
	return true
}

// storeDir is the file store's folder.
func (h *harness) storeDir() string { return filepath.Join(h.dir, "store") }

func (h *harness) snapshot(ctx context.Context) storeSnapshot {
	t := h.t
	t.Helper()
	s := storeSnapshot{after: h.kills}
	if h.dyn == nil {
		s.files = map[string][]byte{}
		entries, err := os.ReadDir(h.storeDir())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("snapshot of the store: %v", err)
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".lock") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(h.storeDir(), e.Name()))
			if err != nil {
				t.Fatalf("snapshot of the store: %v", err)
			}
			s.files[e.Name()] = b
		}
		return s
	}
	p := dynamodb.NewScanPaginator(h.dyn, &dynamodb.ScanInput{TableName: aws.String(h.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("snapshot of table %s: %v", h.table, err)
		}
		s.items = append(s.items, page.Items...)
	}
	return s
}

// restore puts the store back as s found it: the folder with s's files
// only; a table created anew (as a restore from a backup creates one)
// holding s's items only.
func (h *harness) restore(ctx context.Context, s storeSnapshot) {
	t := h.t
	t.Helper()
	if h.dyn == nil {
		if err := os.RemoveAll(h.storeDir()); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(h.storeDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range s.files {
			if err := os.WriteFile(filepath.Join(h.storeDir(), name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	h.deleteTable(ctx)
	if err := dynamostore.CreateTable(ctx, h.dyn, h.table); err != nil {
		t.Fatalf("restore table %s: %v", h.table, err)
	}
	for _, item := range s.items {
		if _, err := h.dyn.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.table), Item: item}); err != nil {
			t.Fatalf("restore table %s: %v", h.table, err)
		}
	}
}

// loseStore removes the file store's folder (the next run starts without
// it, as on a volume that did not survive), or deletes the table and
// creates it again as an operator would, with `catchup init-store`.
func (h *harness) loseStore(ctx context.Context) {
	t := h.t
	t.Helper()
	if h.dyn == nil {
		if err := os.RemoveAll(h.storeDir()); err != nil {
			t.Fatal(err)
		}
		return
	}
	h.deleteTable(ctx)
	cmd := exec.CommandContext(ctx, catchupBin, "init-store", "-c", h.cfg)
	cmd.Env = h.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("catchup init-store after the table was deleted: %v\n%s", err, out)
	}
}

// deleteTable deletes the store's table and waits until it is gone.
func (h *harness) deleteTable(ctx context.Context) {
	t := h.t
	t.Helper()
	in := &dynamodb.DescribeTableInput{TableName: aws.String(h.table)}
	if _, err := h.dyn.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(h.table)}); err != nil {
		t.Fatalf("delete table %s: %v", h.table, err)
	}
	if err := dynamodb.NewTableNotExistsWaiter(h.dyn).Wait(ctx, in, time.Minute, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 20*time.Millisecond, time.Second
	}); err != nil {
		t.Fatalf("delete table %s: wait until gone: %v", h.table, err)
	}
}

// storeEventsSummary says what storeEvent did.
func (h *harness) storeEventsSummary() string {
	if !h.o.losses && !h.o.rollbacks {
		return ""
	}
	return fmt.Sprintf("store events: %d losses, %d rollbacks (to snapshots %d kills old on average), %d snapshots taken",
		h.losses, h.rollbacks, h.rolledBackKills/max(1, h.rollbacks), len(h.snapshots))
}
