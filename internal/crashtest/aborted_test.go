package crashtest

import (
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestAbortedAnyFetchSize reads the transactional topic under read_committed
// with fetch sizes from one byte to 1 MiB, and from every offset, and wants
// the committed records only. With a request-level fetch limit equal to the
// partition limit, kfake cut responses without their aborted transactions,
// and aborted records came through (kafkago.fetchRequestMaxBytes).
func TestAbortedAnyFetchSize(t *testing.T) {
	h, ctx := start(t, options{store: "file", provenance: true})
	committed := (seedTxns - (seedTxns+1)/3) * txnRecords
	for _, p := range partitions(true) {
		marks, err := h.srcAll.ListOffsets(ctx, []catchup.Partition{p})
		if err != nil {
			t.Fatal(err)
		}
		end := marks[0].LastStable
		for _, size := range []int32{1, 512, 4096, 16384, 1 << 20} {
			var n, aborted int
			for off := int64(0); off < end; {
				f, err := h.srcCommitted.Fetch(ctx, p, off, size)
				if err != nil {
					t.Fatalf("fetch %s at %d, %d bytes: %v", p, off, size, err)
				}
				if f.Next <= off {
					t.Fatalf("fetch %s at %d, %d bytes: nothing below the end %d", p, off, size, end)
				}
				for i := range f.Records {
					if header(&f.Records[i], hdrAborted) != nil {
						aborted++
					}
				}
				n += len(f.Records)
				off = f.Next
			}
			if n != committed || aborted != 0 {
				t.Errorf("%s read with %d-byte fetches: %d records, %d of them aborted; want %d committed records", p, size, n, aborted, committed)
			}
		}
		// A fetch may start anywhere, inside an aborted transaction too.
		for from := range end {
			f, err := h.srcCommitted.Fetch(ctx, p, from, 4096)
			if err != nil {
				t.Fatalf("fetch %s at %d: %v", p, from, err)
			}
			for i := range f.Records {
				if header(&f.Records[i], hdrAborted) != nil {
					t.Fatalf("fetch %s at %d (4096 bytes): aborted record at offset %d", p, from, f.Records[i].Offset)
				}
			}
		}
	}
}
