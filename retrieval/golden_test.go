package retrieval

import (
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
)

// A Metric and an Index persisted by an earlier release must still decode
// to the same values and re-encode to the same bytes (testdata/golden was
// written by the codec of that release). As the decoded values equal the
// ones built here, encoding these gives the golden bytes too.
func TestCodec_golden(t *testing.T) {
	met := mustMetric(t, 4, 3, 7)
	ix, err := BuildIndex([][]float64{{1, -2.5, 3}, {0.125, 1e-300, -7}, {4, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("metric", func(t *testing.T) {
		golden := blobtest.Golden(t, filepath.Join("testdata", "golden", "metric.bin"), met)
		back := blobtest.Reencode(t, golden, func(b []byte) (*Metric, error) {
			m := new(Metric)
			return m, m.UnmarshalBinary(b)
		})
		if back.Method != met.Method || !slices.Equal(back.Mean, met.Mean) || !slices.Equal(back.Scale, met.Scale) || !mat.Equal(back.L, met.L) {
			t.Fatalf("decoded %+v, want %+v", back, met)
		}
	})
	t.Run("index", func(t *testing.T) {
		golden := blobtest.Golden(t, filepath.Join("testdata", "golden", "index.bin"), ix)
		back := blobtest.Reencode(t, golden, func(b []byte) (*Index, error) {
			x := new(Index)
			return x, x.UnmarshalBinary(b)
		})
		if back.Dim() != ix.Dim() || back.Len() != ix.Len() {
			t.Fatalf("decoded %d×%d, want %d×%d", back.Len(), back.Dim(), ix.Len(), ix.Dim())
		}
		for id := range ix.Len() {
			if !slices.Equal(back.Vector(id), ix.Vector(id)) {
				t.Fatalf("vector %d: %v, want %v", id, back.Vector(id), ix.Vector(id))
			}
		}
	})
}
