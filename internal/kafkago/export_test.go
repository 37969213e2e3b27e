package kafkago

import "time"

// Queued returns how many batches wait for a request, over every broker.
func (t *Target) Queued() int {
	t.sinksMu.Lock()
	defer t.sinksMu.Unlock()
	n := 0
	for _, s := range t.sinks {
		s.mu.Lock()
		n += len(s.queue)
		s.mu.Unlock()
	}
	return n
}

// SetRegroup sets how long a sink waits for the partitions of its last
// request, until the test ends.
func SetRegroup(t interface{ Cleanup(func()) }, d time.Duration) {
	old := sinkRegroup
	sinkRegroup = d
	t.Cleanup(func() { sinkRegroup = old })
}

// SinkPatience is how long a batch waits behind requests in flight.
func SinkPatience() time.Duration { return sinkPatience }

// SetPatience sets how long a batch waits behind requests in flight, until
// the test ends.
func SetPatience(t interface{ Cleanup(func()) }, d time.Duration) {
	old := sinkPatience
	sinkPatience = d
	t.Cleanup(func() { sinkPatience = old })
}
