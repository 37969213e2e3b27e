// Package procstat reads a process's CPU time and peak resident set from
// /proc, for the benchmark tools under bench/ and the Go benchmarks.
package procstat

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go runs on.
const clockTicks = 100

// CPU returns the user+sys CPU time of process pid ("self" for this one),
// all its threads together; children are not included. ok is false when
// the process is gone or there is no /proc.
func CPU(pid string) (d time.Duration, ok bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// Alive reports whether process pid runs (exists and is not a zombie).
func Alive(pid string) bool {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// PeakRSSKB returns the peak resident set size (VmHWM) of process pid in
// KiB, or -1 when it cannot be read.
func PeakRSSKB(pid string) int64 {
	return statusKB(pid, "VmHWM:")
}

// RSSKB returns the current resident set size (VmRSS) of process pid in
// KiB, or -1 when it cannot be read.
func RSSKB(pid string) int64 {
	return statusKB(pid, "VmRSS:")
}

func statusKB(pid, key string) int64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, key); ok {
			fs := strings.Fields(rest)
			if len(fs) == 0 {
				return -1
			}
			n, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// Meter measures the wall and CPU time of this process over an interval.
type Meter struct {
	t0   time.Time
	cpu0 time.Duration
}

// StartSelf starts measuring this process.
func StartSelf() Meter {
	cpu, _ := CPU("self")
	return Meter{t0: time.Now(), cpu0: cpu}
}

// Stop returns the seconds of wall time and of CPU time since StartSelf.
func (m Meter) Stop() (wall, cpu float64) {
	c, _ := CPU("self")
	return time.Since(m.t0).Seconds(), (c - m.cpu0).Seconds()
}
