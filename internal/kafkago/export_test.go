package kafkago

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
