package febr_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// BenchmarkFEBRMemo builds the feature memo of FEBRi and FEBRiu (cosine)
// on the training split of fold 1 (seed 1, standard protocol) of MovieLens
// 100K and Last.fm at k = 50, 200 and 1000, and reports its candidates
// (the pairs with a non-missing feature, and their share of users ×
// items) and its bytes: the figures of docs/performance.md, "FEBR's
// feature memo". OPT-ADG does not run (Options.Iterations < 0). FEBRiu's
// memo on Last.fm takes up to 1.5 GB.
func BenchmarkFEBRMemo(b *testing.B) {
	for _, d := range []struct{ format, dir string }{{"movielens", "ml-100k"}, {"lastfm", "lastfm-hetrec"}} {
		train := trainSplit(b, d.format, d.dir)
		for _, k := range []int{50, 200, 1000} {
			for _, name := range []string{"febr-i-cosine", "febr-iu-cosine"} {
				b.Run(d.dir+"/"+name+"/k="+strconv.Itoa(k), func(b *testing.B) {
					for b.Loop() {
						m, err := recsys.New(name)
						if err != nil {
							b.Fatal(err)
						}
						p := recsys.Params{K: k, Options: &febr.Options{Iterations: -1, MemoryBudget: 4 << 30}}
						if err := m.Fit(context.Background(), train, p); err != nil {
							b.Fatal(err)
						}
						info := m.(*febr.Model).Info()
						if info.Streaming {
							b.Fatal("the memo did not fit its budget")
						}
						b.ReportMetric(float64(info.Candidates), "pairs")
						b.ReportMetric(float64(info.Candidates)/float64(train.Users()*train.Items()), "pair-share")
						b.ReportMetric(float64(info.MemoBytes)/1e6, "memo-MB")
					}
				})
			}
		}
	}
}

// trainSplit is the training matrix of fold 1 of a shared data set
// (../shared/datasets) under the standard protocol, seed 1, as `recsys
// eval` draws it.
func trainSplit(tb testing.TB, format, dir string) *recsys.Matrix {
	tb.Helper()
	path := filepath.Join("../../../shared/datasets", dir)
	datasettest.Require(tb, path)
	pos, err := dataset.Positives(format, path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := &eval.Dataset{Name: pos.Name, UserIDs: pos.UserIDs, ItemIDs: pos.ItemIDs, Users: pos.Users, Items: pos.Items}
	s, err := eval.NewSplit(d, eval.Standard, 1, 0, eval.DefaultMinPositives)
	if err != nil {
		tb.Fatal(err)
	}
	return s.Train
}
