package catchup

import (
	"bytes"
	"time"
)

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

// SameContent reports whether copy holds what r holds: key and value (null
// apart from empty), headers in order, and the timestamp to the
// millisecond. With provenance set, copy's last header (the provenance
// header catchup appended) is left out of the comparison.
func SameContent(r, copy *Record, provenance bool) bool {
	hs := copy.Headers
	if provenance && len(hs) > 0 && hs[len(hs)-1].Key == ProvenanceHeader {
		hs = hs[:len(hs)-1]
	}
	if !sameBytes(r.Key, copy.Key) || !sameBytes(r.Value, copy.Value) || len(r.Headers) != len(hs) ||
		r.Timestamp.UnixMilli() != copy.Timestamp.UnixMilli() {
		return false
	}
	for i := range hs {
		if r.Headers[i].Key != hs[i].Key || !sameBytes(r.Headers[i].Value, hs[i].Value) {
			return false
		}
	}
	return true
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
