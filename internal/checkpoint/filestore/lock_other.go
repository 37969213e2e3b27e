//go:build !unix || aix

package filestore

import (
	"fmt"
	"os"
	"runtime"
)

// lockOnce fails: this platform has no flock, and running without the lock
// would let two runs interleave their writes.
func lockOnce(path, _ string) (*os.File, error) {
	return nil, fmt.Errorf("lock %s: file locks are not supported on %s", path, runtime.GOOS)
}
