package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// writePayloads writes lines lines of exactly valueBytes bytes each to w:
// JSON objects of orders with random ids, customer numbers, amounts and
// timestamps, padded with random letters, the same lines on every call.
// zstd at its default level compresses them to about a third, as it does
// such data; in ProducerPerformance's own values, random letters, its
// matcher finds nothing to compress.
func writePayloads(w io.Writer, lines, valueBytes int) error {
	const open, closing = `{"orders":[`, `],"pad":""}`
	if valueBytes < len(open)+len(closing) {
		return fmt.Errorf("value of %d bytes: want at least %d", valueBytes, len(open)+len(closing))
	}
	r := rand.New(rand.NewPCG(1, 2))
	bw := bufio.NewWriter(w)
	line := make([]byte, 0, 2*valueBytes)
	for range lines {
		line = append(line[:0], open...)
		for i := 0; ; i++ {
			at := len(line)
			if i > 0 {
				line = append(line, ',')
			}
			line = fmt.Appendf(line, `{"id":%d,"customer":"cust-%05d","sku":"SKU-%04X","qty":%d,"price":%d.%02d,"ts":"2026-12-%02dT%02d:%02d:%02d.%03dZ"}`,
				r.Int64N(1e12), r.IntN(100000), r.IntN(1<<16), 1+r.IntN(20), r.IntN(1000), r.IntN(100),
				1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
			if len(line)+len(closing) > valueBytes {
				line = line[:at]
				break
			}
		}
		line = append(line, closing[:len(closing)-2]...)
		for len(line) < valueBytes-2 {
			line = append(line, 'a'+byte(r.IntN(26)))
		}
		line = append(line, closing[len(closing)-2:]...)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return fmt.Errorf("payloads: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("payloads: %w", err)
	}
	return nil
}
