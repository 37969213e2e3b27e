package main

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/schollz/progressbar/v3"
)

// terminal is the error stream of a terminal, shared by the progress bar
// and the log: a log line written while the bar is shown first erases the
// bar's line and then has the bar drawn again below it, so that log lines
// (-v) never land in the middle of the bar. Writes are serialized.
type terminal struct {
	mu  sync.Mutex
	w   io.Writer
	bar atomic.Pointer[progressbar.ProgressBar] // shown now, or nil
}

// eraseLine moves to the start of the line and erases it (ANSI EL).
const eraseLine = "\r\x1b[2K"

// barWriter returns the writer the progress bar draws with.
func (t *terminal) barWriter() io.Writer { return writerFunc(t.write) }

// Write writes a log line above the bar, if one is shown.
func (t *terminal) Write(p []byte) (int, error) {
	bar := t.bar.Load()
	t.mu.Lock()
	if bar != nil {
		if _, err := io.WriteString(t.w, eraseLine); err != nil {
			t.mu.Unlock()
			return 0, err
		}
	}
	n, err := t.w.Write(p)
	t.mu.Unlock()
	if bar != nil {
		// Outside t.mu: the bar writes through barWriter under its own lock.
		_ = bar.RenderBlank()
	}
	return n, err
}

func (t *terminal) write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Write(p)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
