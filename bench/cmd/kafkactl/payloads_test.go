package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestPayloads: lines of exactly the size asked, each a JSON object, the
// same on every call, and compressible by zstd as orders in JSON are.
func TestPayloads(t *testing.T) {
	var a, b bytes.Buffer
	if err := writePayloads(&a, 1000, 1024); err != nil {
		t.Fatal(err)
	}
	if err := writePayloads(&b, 1000, 1024); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two calls wrote different lines")
	}
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("%d lines, want 1000", len(lines))
	}
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); len(l) != 1024 || err != nil {
			t.Fatalf("line %d: %d bytes, JSON error %v; want 1024 bytes of JSON: %s", i, len(l), err, l)
		}
	}
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if r := float64(len(enc.EncodeAll(a.Bytes(), nil))) / float64(a.Len()); r > 0.4 {
		t.Errorf("the payloads compress to %.2f of their size, want at most 0.4", r)
	}
	if err := writePayloads(&a, 1, 10); err == nil {
		t.Error("a 10-byte value: no error")
	}
}
