package eval

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/retrieval"
)

// TestEvaluate_learnedBeatsEuclidean_synthetic: with two informative and
// eight noisy features, every learned metric must beat the Euclidean baseline on
// both kNN error and MAP (docs/design.md#targets retrieval target, on data made here).
func TestEvaluate_learnedBeatsEuclidean_synthetic(t *testing.T) {
	ds := synthetic(120, 8, 1)
	methods := []string{retrieval.MethodEuclidean, retrieval.MethodMLRAUC, retrieval.MethodMLRMAP, retrieval.MethodMLRMRR, retrieval.MethodMLRNDCG, retrieval.MethodMLRPrecision, retrieval.MethodRMLR, retrieval.MethodFRML, retrieval.MethodFRMLAUC}
	opt := Options{
		Methods: methods, Splits: 2, Seed: 3,
		Grid:           Grid{C: []float64{10}, RowSparsity: []float64{0.1}, Kappa: []float64{1}, Rank: []int{4}},
		FRMLIterations: 3000, MLRMaxRounds: 30,
	}
	if raceEnabled {
		opt.Splits, opt.MLRMaxRounds = 1, 15
	}
	rep, err := Evaluate(context.Background(), ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	base := rep.Rows[0]
	if base.Method != retrieval.MethodEuclidean {
		t.Fatalf("first row %q", base.Method)
	}
	eucErr, eucMAP := base.Metrics[KeyKNNError].Mean, base.Metrics[KeyMAP].Mean
	t.Logf("euclidean: kNN error %.3f MAP %.3f", eucErr, eucMAP)
	for _, row := range rep.Rows[1:] {
		e, m := row.Metrics[KeyKNNError].Mean, row.Metrics[KeyMAP].Mean
		t.Logf("%s: kNN error %.3f MAP %.3f %v", row.Method, e, m, row.Params)
		// With one small split (under -race) the kNN error moves in steps
		// of 1/24, so a learned metric may tie the baseline; it must never
		// be worse, and its MAP must be clearly better.
		if e > eucErr || (!raceEnabled && e == eucErr) {
			t.Errorf("%s kNN error %.3f, not below Euclidean %.3f", row.Method, e, eucErr)
		}
		if m < eucMAP+0.1 {
			t.Errorf("%s MAP %.3f, not at least 0.1 above Euclidean %.3f", row.Method, m, eucMAP)
		}
	}
}

// TestEvaluate_reportShape: the JSON is api.Report with "method" rows and
// exactly the five retrieval measures (docs/design.md#evaluation).
func TestEvaluate_reportShape(t *testing.T) {
	ds := synthetic(60, 2, 2)
	rep, err := Evaluate(context.Background(), ds, Options{Methods: []string{retrieval.MethodEuclidean, retrieval.MethodFRMLAUC}, Splits: 2, FRMLIterations: 500, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kind   string `json:"kind"`
		Splits int    `json:"splits"`
		Rows   []map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "retrieval" || got.Splits != 2 || len(got.Rows) != 2 {
		t.Fatalf("kind %q splits %d rows %d", got.Kind, got.Splits, len(got.Rows))
	}
	for _, row := range got.Rows {
		if _, ok := row["model"]; ok {
			t.Error("row has a model field")
		}
		var method string
		if err := json.Unmarshal(row["method"], &method); err != nil || method == "" {
			t.Errorf("row method %s", row["method"])
		}
		var metrics map[string]struct{ Mean, SE float64 }
		if err := json.Unmarshal(row["metrics"], &metrics); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range metrics {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"auc", "knn_error", "map", "p@1", "p@10"}; !slices.Equal(keys, want) {
			t.Errorf("metric keys %v, want %v", keys, want)
		}
	}
}
