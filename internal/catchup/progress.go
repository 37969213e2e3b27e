package catchup

// Progress is what planning needs of one partition's checkpoint: where
// copying resumes, and the counters that estimate the size of its records.
// The checkpoint store's records give it (checkpoint.Checkpoint.Progress);
// internal/plan reads nothing else of them.
type Progress struct {
	Exists  bool  // a checkpoint was committed or reset; false: never copied
	Next    int64 // the next source offset to copy, when Exists
	Records int64 // records copied, all runs together
	Bytes   int64 // their bytes (Record.Size), all runs together
}

// Progress returns p itself, so that a Progress can stand for a checkpoint
// where a planner asks for one.
func (p Progress) Progress() Progress { return p }
