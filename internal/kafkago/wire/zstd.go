package wire

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstd batches are compressed and decompressed whole, with EncodeAll and
// DecodeAll of one encoder and one decoder per process, instead of kafka-go's
// streaming codec: its writer keeps an 8 MiB window per pooled encoder and
// its reader a streaming decoder per batch, costs in CPU and memory that
// grow with every batch and encoder rather than with what a batch holds.

// zstdWindow is the encoder's window. A record batch is at most the topic's
// max.message.bytes (1 MiB by default), so a 64 KiB window loses little
// ratio on it, while it bounds every encoder's history and match tables to
// a fraction of the default 8 MiB window's. Decoders accept any window.
const zstdWindow = 64 << 10

// zstdMaxBatch bounds one batch decompressed: a batch that inflates beyond
// it (a zip bomb, or a producer's batch of 1 GiB of zeros) is an error
// naming its partition and offset rather than an unbounded allocation.
const zstdMaxBatch = 128 << 20

// zstdMaxEncoders bounds the encoders EncodeAll keeps: klauspost allocates
// each one's match tables (1.3 MiB at level 3) when the Encoder is built,
// for as many encoders as it may run at once, so one per CPU of a 64-core
// host would cost 80 MiB before the first batch.
const zstdMaxEncoders = 8

// zstdCodec is the process's zstd encoder and decoder. Both hold no data
// of a run, only reusable buffers, and EncodeAll and DecodeAll are safe for
// concurrent use: sharing them across Sources and Targets keeps their
// buffers to one set per CPU.
type zstdCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// sharedZstd builds the process's codec on first use.
var sharedZstd = sync.OnceValues(func() (*zstdCodec, error) {
	// SpeedDefault is zstd level 3, kafka-go's default level. One encoder
	// per CPU, up to zstdMaxEncoders: with a single one, the partitions'
	// producers would take turns compressing.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(zstdWindow),
		zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), zstdMaxEncoders)), zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	// Concurrency 0: one decoder per CPU for DecodeAll.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(zstdMaxBatch))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return &zstdCodec{enc: enc, dec: dec}, nil
})

// appendZstd appends raw compressed as one zstd frame to b.
func appendZstd(b, raw []byte) ([]byte, error) {
	z, err := sharedZstd()
	if err != nil {
		return b, fmt.Errorf("record batch: %w", err)
	}
	return z.enc.EncodeAll(raw, b), nil
}

// appendUnzstd appends the zstd frames of src decompressed to dst; first is
// the batch's first offset, for errors.
func appendUnzstd(dst, src []byte, first int64) ([]byte, error) {
	z, err := sharedZstd()
	if err != nil {
		return nil, fmt.Errorf("record batch at offset %d: %w", first, err)
	}
	out, err := z.dec.DecodeAll(src, dst)
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return nil, fmt.Errorf("record batch at offset %d: zstd: decompressed over %d MiB, catchup's bound for one batch "+
			"(have the source's producers send smaller batches: batch.size): %w", first, zstdMaxBatch>>20, err)
	case err != nil:
		return nil, fmt.Errorf("record batch at offset %d: zstd: %w", first, err)
	}
	return out, nil
}
