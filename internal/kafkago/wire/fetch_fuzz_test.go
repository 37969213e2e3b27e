package wire

import (
	"encoding/binary"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// FuzzParseFetch feeds arbitrary fetch response bodies of every version
// catchup negotiates to parseFetch and, when it finds the partition, its
// record set to Decode: neither panics, and Decode only returns records
// at or above the offset asked for, in increasing order, with next past
// them.
func FuzzParseFetch(f *testing.F) {
	recs := concat(data(5, -1, false, 2), data(7, 9, true, 1), control(8, 9, false), data(9, -1, false, 1))
	for _, v := range []int16{4, 11} {
		f.Add(fetchBody(v, recs), v, int64(0), true)
		f.Add(fetchBody(v, recs[:len(recs)-5]), v, int64(6), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, v int16, from int64, committed bool) {
		v = 4 + (v&0x7fff)%8 // 4 to 11
		p := catchup.Partition{Topic: "t", Partition: 3}
		fe, err := parseFetch(body, v, p)
		if err != nil || fe.Code != 0 {
			return
		}
		iso := ReadUncommitted
		if committed {
			iso = ReadCommitted
		}
		d, err := Decode(fe, from, iso)
		if err != nil {
			return
		}
		last := from - 1
		for _, r := range d.Records {
			if r.Offset <= last {
				t.Fatalf("decode from %d returned offset %d after %d", from, r.Offset, last)
			}
			last = r.Offset
		}
		if len(d.Records) > 0 && d.Next <= last {
			t.Errorf("decode: next %d, but returned offset %d", d.Next, last)
		}
	})
}

// fetchBody is a fetch response of version v (4 to 11) with partition t/3
// holding recs, one aborted transaction of producer 9 from offset 7.
func fetchBody(v int16, recs []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // throttle
	if v >= 7 {
		b = binary.BigEndian.AppendUint16(b, 0) // error
		b = binary.BigEndian.AppendUint32(b, 0) // session
	}
	b = binary.BigEndian.AppendUint32(b, 1) // topics
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 't')
	b = binary.BigEndian.AppendUint32(b, 1) // partitions
	b = binary.BigEndian.AppendUint32(b, 3)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint64(b, 10) // hwm
	b = binary.BigEndian.AppendUint64(b, 10) // lso
	if v >= 5 {
		b = binary.BigEndian.AppendUint64(b, 0) // log start
	}
	b = binary.BigEndian.AppendUint32(b, 1) // aborted
	b = binary.BigEndian.AppendUint64(b, 9)
	b = binary.BigEndian.AppendUint64(b, 7)
	if v >= 11 {
		b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // preferred replica
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	return append(b, recs...)
}
