//go:build unix && !aix

package filestore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockOnce takes an exclusive, non-blocking flock on path (created if
// needed) for pipeline and writes this process's pid into it. The lock
// lasts until the returned file is closed. If another open file holds it, in
// this process or another, lockOnce returns an error wrapping ErrLocked with
// the holder's pid.
func lockOnce(path, pipeline string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: pipeline %s is in use by another catchup run (%s); wait for it to end or stop it: %w",
				path, pipeline, holder(f), ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// holder describes the process named in a lock file held by someone else.
func holder(f *os.File) string {
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if err != nil {
		return "pid unknown"
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		// The holder may not have written its pid yet.
		return "pid unknown"
	}
	return "pid " + strconv.Itoa(pid)
}
