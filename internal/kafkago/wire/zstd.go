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

// The process's zstd encoders and decoder. They hold no data of a run,
// only reusable buffers, and EncodeAll and DecodeAll are safe for
// concurrent use: sharing them across Sources and Targets keeps their
// buffers to one set per CPU. There is one encoder per klauspost level a
// Target asks for (producer.compression_level), built on first use.
var (
	zstdEncoders [zstd.SpeedBestCompression + 1]func() (*zstd.Encoder, error)
	zstdDecoder  = sync.OnceValues(func() (*zstd.Decoder, error) {
		// Concurrency 0: one decoder per CPU for DecodeAll.
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(zstdMaxBatch))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		return dec, nil
	})
)

func init() {
	for l := range zstdEncoders {
		level := zstd.EncoderLevel(l)
		zstdEncoders[l] = sync.OnceValues(func() (*zstd.Encoder, error) {
			// One encoder per CPU, up to zstdMaxEncoders: with a single
			// one, the partitions' producers would take turns compressing.
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithWindowSize(zstdWindow),
				zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), zstdMaxEncoders)), zstd.WithZeroFrames(true))
			if err != nil {
				return nil, fmt.Errorf("zstd encoder: %w", err)
			}
			return enc, nil
		})
	}
}

// zstdLevel is klauspost's encoder level for a zstd level (0: zstd's
// default, 3): klauspost offers four, and maps zstd's 1 to 22 onto them.
func zstdLevel(level int) zstd.EncoderLevel {
	if level == 0 {
		return zstd.SpeedDefault // kafka-go's and the Java producer's default, zstd level 3
	}
	return zstd.EncoderLevelFromZstd(level)
}

// appendZstd appends raw compressed as one zstd frame to b, at zstd level
// level (0: the default).
func appendZstd(b, raw []byte, level int) ([]byte, error) {
	enc, err := zstdEncoders[zstdLevel(level)]()
	if err != nil {
		return b, fmt.Errorf("record batch: %w", err)
	}
	return enc.EncodeAll(raw, b), nil
}

// appendUnzstd appends the zstd frames of src decompressed to dst; first is
// the batch's first offset, for errors.
func appendUnzstd(dst, src []byte, first int64) ([]byte, error) {
	dec, err := zstdDecoder()
	if err != nil {
		return nil, fmt.Errorf("record batch at offset %d: %w", first, err)
	}
	out, err := dec.DecodeAll(src, dst)
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return nil, fmt.Errorf("record batch at offset %d: zstd: decompressed over %d MiB, catchup's bound for one batch "+
			"(have the source's producers send smaller batches: batch.size): %w", first, zstdMaxBatch>>20, err)
	case err != nil:
		return nil, fmt.Errorf("record batch at offset %d: zstd: %w", first, err)
	}
	return out, nil
}
