package content

import (
	"context"
	"testing"

	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
	"github.com/recsys-engine/recsys/retrieval"
)

// FuzzDecodeContent feeds corrupt content-model records (as a damaged
// database would hold) to the decoder: an error or a usable metric whose
// dimension matches its feature names, never a panic, and never an
// allocation out of proportion to the input; a cold rule, when there is
// one, covers every feature and has a threshold ≥ 0; a graph, when there
// is one, searches without a panic.
func FuzzDecodeContent(f *testing.F) {
	m := retrieval.Euclidean([]float64{0, 1, 2}, []float64{1, 1, 1})
	plain := NewContent([]string{"a", "b", "c"}, m)
	cold, err := plain.WithColdRule(ColdRule{Support: []uint32{0, 3, 300}, MaxDistance: 2.5})
	if err != nil {
		f.Fatal(err)
	}
	gc, gd := graphData(60)
	gd.ContentApproxAbove = 10
	withG, err := BuildGraph(context.Background(), gc, gd.Features, gd.ContentApproxAbove, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range []*Content{plain, cold, withG} {
		good, err := encodeContent(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(good)
		f.Add(good[:len(good)/2])
	}
	f.Add([]byte{0x80, 0x80, 0x40}) // a count of 1<<20 names in 3 bytes
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			c   *Content
			err error
		)
		n := blobtest.Allocated(func() { c, err = decodeContent(data) })
		if limit := uint64(64*len(data) + 1<<16); n > limit {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(data), n)
		}
		if err != nil {
			return
		}
		if c.metric.Dim() != len(c.names) {
			t.Fatalf("%d names for dimension %d", len(c.names), c.metric.Dim())
		}
		if _, err := c.metric.Project(make([]float64, len(c.names))); err != nil {
			t.Fatal(err)
		}
		if c.cold != nil && (len(c.cold.Support) != len(c.names) || !(c.cold.MaxDistance >= 0)) {
			t.Fatalf("cold rule %+v for %d names", c.cold, len(c.names))
		}
		if g := c.graph; g != nil {
			// A graph that decodes can be searched without a panic.
			vecs := make([][]float64, g.HNSW.Len())
			for i := range vecs {
				vecs[i] = make([]float64, g.HNSW.Dim())
				vecs[i][0] = float64(i)
			}
			ix, err := retrieval.BuildIndex(vecs)
			if err != nil {
				t.Fatal(err)
			}
			h, err := retrieval.AttachHNSW(ix, g.HNSW)
			if err != nil {
				t.Fatal(err)
			}
			h.Search(vecs[0], 5, nil)
			h.SearchID(len(vecs)-1, 5, nil)
		}
	})
}
