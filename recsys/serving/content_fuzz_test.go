package serving

import (
	"testing"

	"recsys/recsys/blob/blobtest"
	"recsys/retrieval"
)

// FuzzDecodeContent feeds corrupt content-model records (as a damaged
// database would hold) to the decoder: an error or a usable metric whose
// dimension matches its feature names, never a panic, and never an
// allocation out of proportion to the input.
func FuzzDecodeContent(f *testing.F) {
	m := retrieval.Euclidean([]float64{0, 1, 2}, []float64{1, 1, 1})
	good, err := encodeContent([]string{"a", "b", "c"}, m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0x80, 0x80, 0x40}) // a count of 1<<20 names in 3 bytes
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			names []string
			met   *retrieval.Metric
			err   error
		)
		n := blobtest.Allocated(func() { names, met, err = decodeContent(data) })
		if limit := uint64(64*len(data) + 1<<16); n > limit {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(data), n)
		}
		if err != nil {
			return
		}
		if met.Dim() != len(names) {
			t.Fatalf("%d names for dimension %d", len(names), met.Dim())
		}
		if _, err := met.Project(make([]float64, len(names))); err != nil {
			t.Fatal(err)
		}
	})
}
