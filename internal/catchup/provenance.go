package catchup

import (
	"bytes"
	"fmt"
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
	dst = append(dst, "v1:"...)
	dst = append(dst, pv.Cluster...)
	dst = append(dst, ':')
	dst = append(dst, pv.Topic...)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(pv.Partition.Partition), 10)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, pv.Offset, 10)
}

// ParseProvenance decodes a provenance header value.
func ParseProvenance(v []byte) (Provenance, error) {
	var pv Provenance
	parts := bytes.Split(v, []byte(":"))
	if len(parts) != 5 || string(parts[0]) != "v1" {
		return pv, fmt.Errorf("provenance header %q: want v1:<cluster>:<topic>:<partition>:<offset>", v)
	}
	p, err := strconv.ParseInt(string(parts[3]), 10, 32)
	if err != nil {
		return pv, fmt.Errorf("provenance header %q: partition: %w", v, err)
	}
	o, err := strconv.ParseInt(string(parts[4]), 10, 64)
	if err != nil {
		return pv, fmt.Errorf("provenance header %q: offset: %w", v, err)
	}
	pv.Cluster, pv.Topic, pv.Partition.Partition, pv.Offset = string(parts[1]), string(parts[2]), int32(p), o
	return pv, nil
}

// SourceOffset returns the source offset that r was copied from, if r carries
// a provenance header naming cluster and source partition p. With several
// matching headers (a record copied around a loop) the last one wins.
func SourceOffset(r *Record, cluster string, p Partition) (int64, bool) {
	off, ok := int64(0), false
	for i := range r.Headers {
		h := &r.Headers[i]
		if h.Key != ProvenanceHeader {
			continue
		}
		pv, err := ParseProvenance(h.Value)
		if err != nil || pv.Cluster != cluster || pv.Partition != p {
			continue
		}
		off, ok = pv.Offset, true
	}
	return off, ok
}

// CopiedFrom reports whether r carries a provenance header naming cluster as
// a source: r was copied from cluster at some hop.
func CopiedFrom(r *Record, cluster string) bool {
	for i := range r.Headers {
		h := &r.Headers[i]
		if h.Key != ProvenanceHeader {
			continue
		}
		if pv, err := ParseProvenance(h.Value); err == nil && pv.Cluster == cluster {
			return true
		}
	}
	return false
}
