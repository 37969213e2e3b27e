package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// Compaction thresholds: see the package doc.
const (
	// compactAfterBytes is the least journal size that a change folds into
	// the snapshot, however small the snapshot.
	compactAfterBytes = 64 << 10
	// compactOnCloseBytes is the largest pipeline (snapshot and journal)
	// that Close folds into one file: about 50 partitions, a laptop's
	// pipeline, which then rests in one readable file.
	compactOnCloseBytes = 16 << 10
)

// journalHeader is the first line of <dir>/<pipeline>.journal.
type journalHeader struct {
	Version  *int   `json:"version"`
	Pipeline string `json:"pipeline"`
	Journal  bool   `json:"journal"`
}

// entry returns the journal line of cp: its whole state, so that replaying
// a line twice, or over a snapshot that already holds it, changes nothing.
func entry(cp checkpoint.Checkpoint) ([]byte, error) {
	b, err := json.Marshal(toFile(cp))
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// replay applies the journal at path, the journal of pipeline, to cps and
// begins (a line of a begin is journalLine.Begin, begin.go). It
// returns the length of its complete lines: a last line without its newline
// is the write of a change that never returned (a crash), and is dropped;
// any other bad line is an error naming path and the line.
func replay(path, pipeline string, cps map[catchup.Partition]checkpoint.Checkpoint, begins map[string]checkpoint.Begin) (int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	good := bytes.LastIndexByte(data, '\n') + 1
	for n, line := range bytes.SplitAfter(data[:good], []byte("\n")) {
		if len(line) == 0 {
			continue // after the last newline
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if n == 0 {
			var h journalHeader
			if err := dec.Decode(&h); err != nil {
				return 0, fmt.Errorf("read %s: line 1: %w", path, err)
			}
			switch {
			case h.Version == nil || !h.Journal:
				return 0, fmt.Errorf("read %s: line 1 is not a catchup journal header", path)
			case *h.Version != version:
				return 0, fmt.Errorf("read %s: format version %d, this catchup reads version %d", path, *h.Version, version)
			case h.Pipeline != pipeline:
				return 0, fmt.Errorf("read %s: holds pipeline %q, want %q", path, h.Pipeline, pipeline)
			}
			continue
		}
		var jl journalLine
		if err := dec.Decode(&jl); err != nil {
			return 0, fmt.Errorf("read %s: line %d: %w", path, n+1, err)
		}
		if jl.Begin != nil {
			if err := replayBegin(jl, begins); err != nil {
				return 0, fmt.Errorf("read %s: line %d: %w", path, n+1, err)
			}
			continue
		}
		fc := jl.fileCheckpoint
		if fc.Topic == "" {
			return 0, fmt.Errorf("read %s: line %d has no topic", path, n+1)
		}
		if err := fc.check(); err != nil {
			return 0, fmt.Errorf("read %s: line %d: %w", path, n+1, err)
		}
		cp := fromFile(fc)
		cps[cp.Partition] = cp
	}
	return int64(good), nil
}

// appendJournal appends data to the journal at path (size bytes long, all
// complete lines) and syncs it, writing the header of pipeline first into a
// new journal, and syncing the directory then. It opens the file for each
// append, so that a removed directory is an error, not a write into an
// unlinked file. On an error the journal is cut back to size, so that the
// next append does not follow a torn line. It returns the bytes written.
func appendJournal(path, pipeline string, size int64, data []byte) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	defer f.Close()
	if size == 0 {
		h, err := json.Marshal(journalHeader{Version: new(version), Pipeline: pipeline, Journal: true})
		if err != nil {
			return 0, fmt.Errorf("write %s: %w", path, err)
		}
		data = append(append(h, '\n'), data...)
	}
	// Every failure below cuts the file back (best effort): the caller
	// keeps size, so the next append is written at size, and a shorter line
	// written over this one would leave its tail after it as a line of its
	// own, which replay refuses.
	if _, err := f.WriteAt(data, size); err != nil {
		_ = f.Truncate(size)
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(size)
		return 0, fmt.Errorf("sync %s: %w", path, err)
	}
	if size == 0 {
		if err := syncJournalDir(filepath.Dir(path)); err != nil {
			_ = f.Truncate(size)
			return 0, fmt.Errorf("sync directory of %s: %w", path, err)
		}
	}
	if err := closeJournal(f); err != nil {
		_ = os.Truncate(path, size)
		return 0, fmt.Errorf("close %s: %w", path, err)
	}
	return int64(len(data)), nil
}

// syncJournalDir and closeJournal are what appendJournal calls to make a
// new journal's name durable and to close it; variables so that a test can
// make them fail.
var (
	syncJournalDir = syncDir
	closeJournal   = (*os.File).Close
)
