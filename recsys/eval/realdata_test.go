package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// datasets is where the shared data sets live, relative to this package.
const datasets = "../../../shared/datasets"

// TestRun_realMovieLens is a regression guard on MovieLens 100K with a
// fixed small grid: personalised models beat popularity on ADG and MAP,
// and popularity lands in a known range.
func TestRun_realMovieLens(t *testing.T) {
	dir := filepath.Join(datasets, "ml-100k")
	datasettest.Require(t, dir)
	pos, err := dataset.Positives("movielens", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &Dataset{Name: pos.Name, UserIDs: pos.UserIDs, ItemIDs: pos.ItemIDs, Users: pos.Users, Items: pos.Items}
	rep, err := Run(context.Background(), d, Options{
		Models: []string{"popular", "itemknn", "userknn", "kunn", "slim"},
		Folds:  1,
		Seed:   1,
		Grid:   Grid{K: []int{100}, L1: []float64{1}, L2: []float64{10}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pop := rep.Rows[0].Metrics
	if adg := pop["adg"].Mean; adg < 0.15 || adg > 0.25 {
		t.Errorf("popular ADG = %.4f, outside [0.15, 0.25]", adg)
	}
	for _, row := range rep.Rows[1:] {
		for _, key := range []string{"adg", "map"} {
			if got, base := row.Metrics[key].Mean, pop[key].Mean; got <= base*1.1 {
				t.Errorf("%s %s = %.4f, popular %.4f", row.Model, key, got, base)
			}
		}
	}
}
