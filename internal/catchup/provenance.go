package catchup

import (
	"bytes"
	"fmt"
	"math/bits"
	"strconv"
)

// ProvenanceHeader is the key of the header catchup adds to every record it
// copies. Its value is ASCII text:
//
//	v1:<cluster>:<topic>:<partition>:<offset>
//
// for example "v1:eu-prod:orders:3:1842". <cluster> is the pipeline's source
// cluster name; Kafka topic names cannot contain ':' and cluster names are
// validated not to. A record copied several times along a chain of clusters
// carries one such header per hop, in hop order.
const ProvenanceHeader = "catchup-src"

// Provenance names where a copied record came from.
type Provenance struct {
	Cluster string
	Partition
	Offset int64
}

// AppendProvenance appends the header value for pv to dst and returns it.
func AppendProvenance(dst []byte, pv Provenance) []byte {
	return strconv.AppendInt(AppendProvenancePrefix(dst, pv.Partition, pv.Cluster), pv.Offset, 10)
}

// AppendProvenancePrefix appends the part of the header value that is the
// same for every record of p copied from cluster, everything up to the
// offset, so that an encoder formats it once per batch:
// AppendProvenance(dst, pv) is AppendProvenancePrefix(dst, pv.Partition,
// pv.Cluster) followed by pv.Offset in decimal.
func AppendProvenancePrefix(dst []byte, p Partition, cluster string) []byte {
	dst = append(dst, "v1:"...)
	dst = append(dst, cluster...)
	dst = append(dst, ':')
	dst = append(dst, p.Topic...)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(p.Partition), 10)
	return append(dst, ':')
}

// ProvenanceLen is len(AppendProvenance(nil, pv)), without formatting it.
func ProvenanceLen(pv Provenance) int {
	return ProvenancePrefixLen(pv.Partition, pv.Cluster) + DecimalLen(pv.Offset)
}

// ProvenancePrefixLen is len(AppendProvenancePrefix(nil, p, cluster)): the
// length of a header value without its offset, the same for every record
// of p, so that a copy sizes it once and adds DecimalLen of each offset.
func ProvenancePrefixLen(p Partition, cluster string) int {
	return len("v1:") + len(cluster) + 1 + len(p.Topic) + 1 + DecimalLen(int64(p.Partition)) + 1
}

// DecimalLen is the length of strconv.FormatInt(x, 10), counted from the
// bit length of x and one comparison rather than a division per digit.
func DecimalLen(x int64) int {
	u, sign := uint64(x), 0
	if x < 0 {
		u, sign = -u, 1 // -MinInt64 wraps to itself, which is right as a uint64
	}
	// bits.Len64(u)*1233>>12 is floor(log10(2^Len64(u))): the digit count of
	// u, or one more.
	d := bits.Len64(u|1) * 1233 >> 12
	if u >= powersOf10[d] {
		d++
	}
	return sign + d
}

// powersOf10[i] is 10^i, for every power of 10 a uint64 holds; [0] is 0 so
// that DecimalLen counts one digit for 0.
var powersOf10 = [...]uint64{0, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// ParseProvenance decodes a provenance header value.
func ParseProvenance(v []byte) (Provenance, error) {
	cluster, topic, part, off, ok := splitProvenance(v)
	if !ok {
		return Provenance{}, fmt.Errorf("provenance header %q: want v1:<cluster>:<topic>:<partition>:<offset>", v)
	}
	return Provenance{Cluster: string(cluster), Partition: Partition{Topic: string(topic), Partition: part}, Offset: off}, nil
}

// splitProvenance parses a header value without allocating.
func splitProvenance(v []byte) (cluster, topic []byte, partition int32, offset int64, ok bool) {
	if !bytes.HasPrefix(v, []byte("v1:")) {
		return nil, nil, 0, 0, false
	}
	var fields [4][]byte
	rest := v[3:]
	for i := range 3 {
		j := bytes.IndexByte(rest, ':')
		if j < 0 {
			return nil, nil, 0, 0, false
		}
		fields[i], rest = rest[:j], rest[j+1:]
	}
	fields[3] = rest
	p, okP := parseDecimal(fields[2], 1<<31-1)
	o, okO := parseDecimal(fields[3], 1<<63-1)
	if !okP || !okO {
		return nil, nil, 0, 0, false
	}
	return fields[0], fields[1], int32(p), o, true
}

// parseDecimal parses a non-negative decimal number of at most limit.
func parseDecimal(b []byte, limit int64) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > uint64(limit) {
		return 0, false
	}
	return int64(n), true
}

// SourceOffset returns the source offset that r was copied from, if r carries
// a provenance header naming cluster and source partition p. With several
// matching headers (a record copied around a loop) the last one wins. It
// does not allocate: verify calls it for every record of a target partition.
func SourceOffset(r *Record, cluster string, p Partition) (int64, bool) {
	off, found := int64(0), false
	for i := range r.Headers {
		h := &r.Headers[i]
		if h.Key != ProvenanceHeader {
			continue
		}
		c, t, part, o, ok := splitProvenance(h.Value)
		if ok && string(c) == cluster && string(t) == p.Topic && part == p.Partition {
			off, found = o, true
		}
	}
	return off, found
}

// CopiedPrefix is how the value of a provenance header naming cluster as
// a source starts. A caller that tests many records against one cluster
// builds it once and calls CopiedWith.
func CopiedPrefix(cluster string) string { return "v1:" + cluster + ":" }

// CopiedWith reports whether r carries a provenance header whose value
// starts with prefix, CopiedPrefix of a cluster: r was copied from that
// cluster at some hop.
func CopiedWith(r *Record, prefix string) bool {
	for i := range r.Headers {
		h := &r.Headers[i]
		if h.Key == ProvenanceHeader && len(h.Value) >= len(prefix) && string(h.Value[:len(prefix)]) == prefix {
			return true
		}
	}
	return false
}
