package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// version is the file format this package writes, and the only one it reads.
// Fields added later are optional (a file without them is still version 1):
// verification, start, and the verification's counts after out_of_order.
const version = 1

// file is the content of <dir>/<pipeline>.json.
type file struct {
	Version     int              `json:"version"`
	Pipeline    string           `json:"pipeline"`
	Checkpoints []fileCheckpoint `json:"checkpoints"`      // sorted by topic, then partition
	Begins      []fileBegin      `json:"begins,omitempty"` // sorted by topic; absent when none (begin.go)
}

// fileCheckpoint is a checkpoint.Checkpoint as the file spells it.
type fileCheckpoint struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Exists    bool      `json:"exists"`
	Next      int64     `json:"next"`
	TargetEnd int64     `json:"target_end"`
	Start     *int64    `json:"start,omitempty"` // absent if unknown
	Records   int64     `json:"records"`
	Bytes     int64     `json:"bytes"`
	Commits   int64     `json:"commits"`
	Owner     string    `json:"owner,omitempty"`
	Epoch     int64     `json:"epoch"`
	Expires   time.Time `json:"expires,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	Gaps      []fileGap `json:"gaps,omitempty"`
	Updated   time.Time `json:"updated,omitzero"`

	Verification *fileVerification `json:"verification,omitempty"` // absent if never verified
}

type fileGap struct {
	From int64     `json:"from"`
	To   int64     `json:"to"`
	At   time.Time `json:"at"`
}

// fileVerification is a catchup.Verification as the file spells it: an
// encoding only, converted to and from it field for field (so a field
// added to one and not the other does not compile). It stays apart for
// the file format's names and for the omitempty of the counts added
// after version 1 was first written.
type fileVerification struct {
	At         time.Time `json:"at"`
	From       int64     `json:"from"`
	To         int64     `json:"to"`
	Source     int64     `json:"source"`
	Matched    int64     `json:"matched"`
	Missing    int64     `json:"missing"`
	Duplicated int64     `json:"duplicated"`
	Differing  int64     `json:"differing"`
	OutOfOrder int64     `json:"out_of_order"`
	// Counts added later; a file without them reads as zero.
	LoopSkipped int64  `json:"loop_skipped,omitempty"`
	Replaced    int64  `json:"replaced,omitempty"`
	Foreign     int64  `json:"foreign,omitempty"`
	Outside     int64  `json:"outside,omitempty"`
	Target      int64  `json:"target,omitempty"`
	Behind      int64  `json:"behind,omitempty"`
	Stuck       string `json:"stuck,omitempty"`
	First       string `json:"first,omitempty"`
}

// encode returns the file content for the checkpoints of pipeline.
func encode(pipeline string, cps map[catchup.Partition]checkpoint.Checkpoint, begins map[string]checkpoint.Begin) ([]byte, error) {
	f := file{Version: version, Pipeline: pipeline, Checkpoints: make([]fileCheckpoint, 0, len(cps)), Begins: toFileBegins(begins)}
	for _, cp := range cps {
		f.Checkpoints = append(f.Checkpoints, toFile(cp))
	}
	slices.SortFunc(f.Checkpoints, func(a, b fileCheckpoint) int {
		return catchup.Partition{Topic: a.Topic, Partition: a.Partition}.Compare(catchup.Partition{Topic: b.Topic, Partition: b.Partition})
	})
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// decode parses the content of path, the file of pipeline: its checkpoints
// and its begins. Any problem is an error naming path: a damaged file is
// never taken for an empty one.
func decode(path, pipeline string, data []byte) (map[catchup.Partition]checkpoint.Checkpoint, map[string]checkpoint.Begin, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		if typ := (*json.UnmarshalTypeError)(nil); errors.As(err, &typ) && typ.Field == "" {
			return nil, nil, fmt.Errorf("read %s: holds a JSON %s, not an object; not a catchup checkpoint file", path, typ.Value)
		}
		return nil, nil, fmt.Errorf("read %s: %s%w", path, position(data, err), err)
	}
	switch {
	case head.Version == nil:
		return nil, nil, fmt.Errorf("read %s: no \"version\" field; not a catchup checkpoint file", path)
	case *head.Version != version:
		return nil, nil, fmt.Errorf("read %s: format version %d, this catchup reads version %d", path, *head.Version, version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field in a hand-edited file must not be dropped quietly
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("read %s: %s%w", path, position(data, err), err)
	}
	if f.Pipeline != pipeline {
		return nil, nil, fmt.Errorf("read %s: holds pipeline %q, want %q", path, f.Pipeline, pipeline)
	}
	cps := make(map[catchup.Partition]checkpoint.Checkpoint, len(f.Checkpoints))
	for i, fc := range f.Checkpoints {
		p := catchup.Partition{Topic: fc.Topic, Partition: fc.Partition}
		if fc.Topic == "" {
			return nil, nil, fmt.Errorf("read %s: checkpoint %d has no topic", path, i)
		}
		if _, dup := cps[p]; dup {
			return nil, nil, fmt.Errorf("read %s: checkpoint %d: %s appears twice", path, i, p)
		}
		if err := fc.check(); err != nil {
			return nil, nil, fmt.Errorf("read %s: checkpoint %d: %w", path, i, err)
		}
		cp := fromFile(fc)
		cps[p] = cp
	}
	begins, err := fromFileBegins(f.Begins)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return cps, begins, nil
}

// check returns an error naming fc's partition and field if one of its
// offsets is one no catchup writes: taken as it is, a negative next would
// fail the partition as a gap, and a target_end below -1 would skip the
// read-back that keeps a resumed copy from duplicating records.
func (fc fileCheckpoint) check() error {
	p := catchup.Partition{Topic: fc.Topic, Partition: fc.Partition}
	switch {
	case fc.Partition < 0:
		return fmt.Errorf("topic %s: partition %d is negative; the file is damaged", fc.Topic, fc.Partition)
	case fc.Next < 0:
		return fmt.Errorf("%s: next %d is negative; the file is damaged", p, fc.Next)
	case fc.TargetEnd < -1:
		return fmt.Errorf("%s: target_end %d is below -1 (unknown); the file is damaged", p, fc.TargetEnd)
	case fc.Start != nil && *fc.Start < 0:
		return fmt.Errorf("%s: start %d is negative; the file is damaged", p, *fc.Start)
	}
	return nil
}

// toFile returns cp as the file spells it.
func toFile(cp checkpoint.Checkpoint) fileCheckpoint {
	fc := fileCheckpoint{
		Topic: cp.Topic, Partition: cp.Partition.Partition, Exists: cp.Exists,
		Next: cp.Next, TargetEnd: cp.TargetEnd, Start: cp.Start, Records: cp.Records, Bytes: cp.Bytes, Commits: cp.Commits,
		Owner: cp.Owner, Epoch: cp.Epoch, Expires: utc(cp.Expires),
		LastError: cp.LastError, Updated: utc(cp.Updated),
	}
	for _, g := range cp.Gaps {
		fc.Gaps = append(fc.Gaps, fileGap{From: g.From, To: g.To, At: utc(g.At)})
	}
	if v := cp.LastVerification; v != nil {
		fv := fileVerification(*v)
		fv.At = utc(v.At)
		fc.Verification = &fv
	}
	return fc
}

// fromFile returns the checkpoint fc spells.
func fromFile(fc fileCheckpoint) checkpoint.Checkpoint {
	cp := checkpoint.Checkpoint{
		Partition: catchup.Partition{Topic: fc.Topic, Partition: fc.Partition}, Exists: fc.Exists,
		Next: fc.Next, TargetEnd: fc.TargetEnd, Start: fc.Start, Records: fc.Records, Bytes: fc.Bytes, Commits: fc.Commits,
		Owner: fc.Owner, Epoch: fc.Epoch, Expires: fc.Expires,
		LastError: fc.LastError, Updated: fc.Updated,
	}
	for _, g := range fc.Gaps {
		cp.Gaps = append(cp.Gaps, checkpoint.Gap{From: g.From, To: g.To, At: g.At})
	}
	if v := fc.Verification; v != nil {
		cv := checkpoint.Verification(*v)
		cp.LastVerification = &cv
	}
	return cp
}

// position returns "line L column C: " for a JSON error that knows its
// offset in data, or "".
func position(data []byte, err error) string {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		off int64
	)
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	default:
		return ""
	}
	// Offset counts the bytes read, the offending one included.
	off = min(max(off-1, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d column %d: ", line, col)
}

// writeFile replaces path with data atomically and durably: it writes a
// temporary file in the same directory, syncs it, renames it over path and
// syncs the directory, so a crash leaves either the old or the new content.
func writeFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()           // already closed on most paths; the first error is the one to report
			_ = os.Remove(tmp.Name()) // gone already if the rename happened
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return nil
}

// syncDir makes the names in dir durable: a created, renamed or removed file.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// utc returns t in UTC, so that the file reads the same on every machine.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
