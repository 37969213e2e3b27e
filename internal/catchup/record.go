package catchup

import "time"

// Record is one Kafka record as catchup copies it. A nil Key or Value is a
// Kafka null and stays null; an empty non-nil slice stays empty.
type Record struct {
	Offset    int64 // offset in the partition it was read from
	Key       []byte
	Value     []byte
	Headers   []Header
	Timestamp time.Time
}

// Header is one record header. A nil Value is a Kafka null.
type Header struct {
	Key   string
	Value []byte
}

// Size is the number of bytes of key, value and headers, the unit of the
// per-window byte limits and of the bytes counters.
func (r *Record) Size() int {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}
