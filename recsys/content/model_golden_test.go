package content

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
	"github.com/recsys-engine/recsys/retrieval"
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
	back := blobtest.Reencode(t, data, func(b []byte) (recsys.Artefact, error) { return recsys.Decode(Name, b) })
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

// TestContent_goldenColdRule: a content model with a cold rule
// (testdata/golden/content-cold.bin, the layout that starts with a zero
// byte) loads to the same names, metric, support and threshold, and
// re-encodes to the same bytes; a threshold of +Inf survives the trip.
func TestContent_goldenColdRule(t *testing.T) {
	m := &retrieval.Metric{Method: retrieval.MethodFRML, Mean: []float64{0.5, -2},
		Scale: []float64{1, 0.25}, L: mat.NewDense(2, 2, []float64{1, 0, -0.5, 2})}
	for _, tc := range []struct {
		file string
		rule ColdRule
	}{
		{"content-cold.bin", ColdRule{Support: []uint32{7, 1}, MaxDistance: 1.375}},
		{"content-cold-inf.bin", ColdRule{Support: []uint32{0, 300}, MaxDistance: math.Inf(1)}},
	} {
		want, err := NewContent([]string{"genre:drama", "year"}, m).WithColdRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		data := blobtest.Golden(t, filepath.Join("testdata", "golden", tc.file), want)
		if data[0] != 0 {
			t.Fatalf("%s starts with %d, want the zero byte of the cold layout", tc.file, data[0])
		}
		back := blobtest.Reencode(t, data, func(b []byte) (recsys.Artefact, error) { return recsys.Decode(Name, b) })
		got := back.(*Content)
		if !slices.Equal(got.names, want.names) || !mat.Equal(got.metric.L, want.metric.L) || got.cold == nil ||
			!slices.Equal(got.cold.Support, tc.rule.Support) || got.cold.MaxDistance != tc.rule.MaxDistance {
			t.Errorf("%s: decoded %+v cold %+v, want %+v", tc.file, got, got.cold, tc.rule)
		}
	}
	if _, err := NewContent([]string{"a"}, retrieval.Euclidean([]float64{0}, []float64{1})).WithColdRule(ColdRule{Support: []uint32{1, 2}}); err == nil {
		t.Error("a rule with support for 2 features accepted for a model of 1")
	}
	if _, err := NewContent([]string{"a"}, retrieval.Euclidean([]float64{0}, []float64{1})).WithColdRule(ColdRule{Support: []uint32{1}, MaxDistance: math.NaN()}); err == nil {
		t.Error("a NaN threshold accepted")
	}
}
