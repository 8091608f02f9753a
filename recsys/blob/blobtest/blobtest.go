// Package blobtest helps tests keep the byte format of persisted blobs:
// golden files written by an earlier release must decode, and re-encode to
// the same bytes. Run the tests with -update-golden to record the files of
// a new format (never to paper over a change: models already stored would
// no longer load).
package blobtest

import (
	"bytes"
	"encoding"
	"flag"
	"os"
	"runtime"
	"testing"
)

var update = flag.Bool("update-golden", false, "rewrite the golden blob files with the current encoders")

// Golden returns the bytes of the golden file at path, first writing the
// encoding of current there when the tests run with -update-golden.
func Golden(tb testing.TB, path string, current encoding.BinaryMarshaler) []byte {
	tb.Helper()
	if *update {
		data, err := current.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return golden
}

// Reencode decodes golden with decode, checks that encoding the result
// gives golden again, and returns it.
func Reencode[T encoding.BinaryMarshaler](tb testing.TB, golden []byte, decode func([]byte) (T, error)) T {
	tb.Helper()
	v, err := decode(golden)
	if err != nil {
		tb.Fatalf("decoding the golden bytes: %v", err)
	}
	again, err := v.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(again, golden) {
		tb.Fatalf("re-encoding gives %d bytes that differ from the %d golden ones", len(again), len(golden))
	}
	return v
}

// Allocated reports the bytes fn allocates: the decoders' fuzz tests bound
// it, so that sizes read from corrupt bytes cannot drive an allocation out
// of proportion to the input.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// RoundTrip encodes v and decodes the bytes into a new T with its
// UnmarshalBinary; it returns the bytes and the decoded copy.
func RoundTrip[T any, PT interface {
	*T
	encoding.BinaryUnmarshaler
}](tb testing.TB, v encoding.BinaryMarshaler) ([]byte, PT) {
	tb.Helper()
	data, err := v.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	back := PT(new(T))
	if err := back.UnmarshalBinary(data); err != nil {
		tb.Fatal(err)
	}
	return data, back
}
