package serving

import (
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"recsys/recsys/blob/blobtest"
	"recsys/retrieval"
)

// TestContent_golden: a content model as an earlier release persisted it
// (testdata/golden/content.bin, written by jobs.encodeContent before the
// content metric became a served kind) still loads through its kind's
// decoder, to the same feature names and metric, and re-encodes to the
// same bytes.
func TestContent_golden(t *testing.T) {
	m := &retrieval.Metric{Method: retrieval.MethodFRML, Mean: []float64{0.5, -2, 1990},
		Scale: []float64{1, 0.25, 12.5}, L: mat.NewDense(3, 2, []float64{1, 0, -0.5, 2, 0.125, -3.75})}
	want := NewContent([]string{"genre:drama", "length", "année"}, m)
	data := blobtest.Golden(t, filepath.Join("testdata", "golden", "content.bin"), want)
	back := blobtest.Reencode(t, data, func(b []byte) (Artefact, error) { return Decode(ContentModelName, b) })
	got, ok := back.(*Content)
	if !ok {
		t.Fatalf("decoded a %T, want *Content", back)
	}
	if !slices.Equal(got.names, want.names) {
		t.Errorf("feature names %q, want %q", got.names, want.names)
	}
	g, w := got.metric, want.metric
	if g.Method != w.Method || !slices.Equal(g.Mean, w.Mean) || !slices.Equal(g.Scale, w.Scale) || !mat.Equal(g.L, w.L) {
		t.Errorf("metric %+v, want %+v", g, w)
	}
}
