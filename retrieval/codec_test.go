package retrieval

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
)

func mat1(v float64) *mat.Dense { return mat.NewDense(1, 1, []float64{v}) }

func TestMetric_MarshalBinary_roundTrip(t *testing.T) {
	met := mustMetric(t, 6, 4, 2)
	b, got := blobtest.RoundTrip[Metric](t, met)
	if got.Method != met.Method || !slices.Equal(got.Mean, met.Mean) || !slices.Equal(got.Scale, met.Scale) || !mat.Equal(got.L, met.L) {
		t.Fatalf("round trip changed the metric")
	}
	for cut := 0; cut < len(b); cut += 7 {
		if err := new(Metric).UnmarshalBinary(b[:cut]); err == nil {
			t.Fatalf("truncated at %d accepted", cut)
		}
	}
}

func TestIndex_MarshalBinary_roundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	vs := randVectors(rng, 30, 5)
	ix, _ := BuildIndex(vs)
	b, got := blobtest.RoundTrip[Index](t, ix)
	if got.Len() != 30 || got.Dim() != 5 || !slices.Equal(got.Vector(17), vs[17]) {
		t.Fatalf("round trip changed the index")
	}
	b2, _ := got.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("re-encoding differs")
	}
}

func FuzzMetric_UnmarshalBinary(f *testing.F) {
	b, _ := mustMetric(f, 3, 2, 1).MarshalBinary()
	f.Add(b)
	f.Add([]byte("RMET\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Metric
		if err := m.UnmarshalBinary(data); err != nil {
			return
		}
		// A decoded metric must be usable and re-encode identically.
		x := make([]float64, m.Dim())
		if _, err := m.Project(x); err != nil {
			t.Fatal(err)
		}
		out, err := m.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzIndex_UnmarshalBinary(f *testing.F) {
	ix, _ := BuildIndex([][]float64{{1, 2}, {3, 4}})
	b, _ := ix.MarshalBinary()
	f.Add(b)
	f.Add([]byte("RIDX\x01\x02\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ix Index
		if err := ix.UnmarshalBinary(data); err != nil {
			return
		}
		// Every query allocates Dim floats: a corrupt header must not
		// claim a dimension the data does not bound.
		if ix.Dim() > maxIndexDim {
			t.Fatalf("decoded an index of dimension %d", ix.Dim())
		}
		ix.Search(make([]float64, ix.Dim()), 3, nil)
		out, _ := ix.MarshalBinary()
		if !bytes.Equal(out, data) {
			t.Fatal("re-encoding differs")
		}
	})
}
