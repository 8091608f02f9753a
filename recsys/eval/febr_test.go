package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// `febr` stands for its seven variants, one report row each under model
// "febr" with the variant's label, which also names the table row and
// the --dump files; a variant named on its own is not repeated.
func TestRun_febrVariantRows(t *testing.T) {
	d := clustered(7, 100, 80, 4, 16)
	dir := t.TempDir()
	opt := Options{
		Folds: 1, Seed: 1, DumpDir: dir,
		Models: []string{"slim", FEBRAll, "febr-i-slim"},
		Grid:   Grid{K: []int{10, 20}, L1: []float64{1, 0.1}, L2: []float64{1}, Lambda: []float64{1e-3, 1e-2}},
		FEBR:   febr.Options{EvalEvery: 1000, Patience: 2},
	}
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"FEBRi-cosine", "FEBRu-cosine", "FEBRiu-cosine", "FEBRi-kunn", "FEBRu-kunn", "FEBRiu-kunn", "FEBRi-slim"}
	if len(rep.Rows) != 2+len(want) || rep.Rows[0].Model != "slim" || rep.Rows[0].Variant != "" || rep.Rows[len(rep.Rows)-1].Model != AutoRow {
		t.Fatalf("%d rows: %+v", len(rep.Rows), rep.Rows)
	}
	var table strings.Builder
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for k, row := range rep.Rows[1 : 1+len(want)] {
		if row.Model != "febr" || row.Variant != want[k] {
			t.Fatalf("row %d: model %q variant %q, want febr %q", k+1, row.Model, row.Variant, want[k])
		}
		if row.Params["k"] == 0 || row.Params["lambda"] == 0 {
			t.Errorf("%s: params %v", row.Variant, row.Params)
		}
		if !strings.Contains(row.Settings["grid"], "lambda∈{0.001,0.01") {
			t.Errorf("%s: grid %q", row.Variant, row.Settings["grid"])
		}
		if _, err := os.Stat(filepath.Join(dir, "fold-1", row.Variant+".ranks.csv")); err != nil {
			t.Errorf("%s: %v", row.Variant, err)
		}
		if !strings.Contains(table.String(), "\n"+row.Variant+" ") {
			t.Errorf("the table has no row %q:\n%s", row.Variant, table.String())
		}
	}
	if strings.Contains(table.String(), "febr/") {
		t.Errorf("the table names rows by model/variant:\n%s", table.String())
	}
	// FEBRi-slim starts every OPT-ADG run from the SLIM predictor with
	// SLIM's own (ℓ1, ℓ2) choice per k and keeps its best θ: it is no
	// worse than SLIM on validation.
	slimRow, febrSlim := rep.Rows[0], rep.Rows[len(want)]
	if p := febrSlim.Params; p["l1"] == 0 || p["l2"] == 0 {
		t.Errorf("FEBRi-slim reports no fsSLIM constants: %v", p)
	}
	sv, _ := strconv.ParseFloat(slimRow.Settings["validation_adg_by_fold"], 64)
	fv, _ := strconv.ParseFloat(febrSlim.Settings["validation_adg_by_fold"], 64)
	if fv < sv-5e-5 {
		t.Errorf("validation ADG: FEBRi-slim %.4f, SLIM %.4f", fv, sv)
	}
}

func TestExpandModels(t *testing.T) {
	// febr is FEBRi-slim alone, as in the service; febr-all the seven
	// variants, without a second FEBRi-slim row for febr-i-slim or febr.
	if got := expandModels([]string{"popular", "febr", "slim", "febr-i-slim"}); !slices.Equal(got, []string{"popular", "febr", "slim"}) {
		t.Fatalf("expandModels = %v", got)
	}
	got := expandModels([]string{"popular", "febr-u-kunn", "febr-all", "febr", "slim"})
	if len(got) != 9 || got[0] != "popular" || got[1] != "febr-u-kunn" || got[8] != "slim" || slices.Contains(got, "febr") {
		t.Fatalf("expandModels = %v", got)
	}
	if err := CheckModels([]string{"febr-all", "febr", "slim"}); err != nil {
		t.Error(err)
	}
	if err := CheckModels([]string{"febr-most"}); err == nil {
		t.Error("CheckModels accepted febr-most")
	}
	if n := len(slices.Compact(slices.Sorted(slices.Values(got)))); n != len(got) {
		t.Fatalf("repeats in %v", got)
	}
}

// FEBRi-slim starts from slim's tuned setting, the grid's extension
// included, searched once per fold for both rows: its k and fsSLIM pair
// are slim's, its tuning ADG no lower than slim's (OPT-ADG starts from
// SLIM and keeps its best θ), and a run of both makes one fit more than
// febr alone (slim's refit for its own row), not slim's whole search
// again. It fails if FEBR searches k or the fsSLIM pair itself, or if
// slim's row searches its grid a second time.
func TestRun_febrStartsFromTunedSLIM(t *testing.T) {
	d := clustered(7, 150, 100, 4, 16)
	run := func(models ...string) (*api.Report, int) {
		opt := Options{
			Folds: 1, Seed: 1, Models: models,
			Grid: Grid{K: []int{10, 20}, L1: []float64{1, 0.1}, L2: []float64{1}, Lambda: []float64{1e-3, 1e-2}},
			FEBR: febr.Options{EvalEvery: 1000, Patience: 2},
		}
		return runCounting(t, d, opt)
	}
	both, nBoth := run("slim", "febr")
	_, nFEBR := run("febr")
	if nBoth != nFEBR+1 {
		t.Errorf("slim and febr made %d fits, febr alone %d: want one more (slim's refit), not slim's search again", nBoth, nFEBR)
	}
	slim, fe := both.Rows[0].Folds[0], both.Rows[1].Folds[0]
	for _, key := range []string{"k", "l1", "l2"} {
		if fe.Params[key] != slim.Params[key] {
			t.Errorf("FEBRi-slim %s=%v, slim's choice %v (params %v and %v)", key, fe.Params[key], slim.Params[key], fe.Params, slim.Params)
		}
	}
	if ext := both.Rows[0].Settings["grid_extended_by_fold"]; ext == "" {
		t.Error("slim's search did not extend the grid: the test does not see the extension shared")
	}
	st, _ := strconv.ParseFloat(both.Rows[0].Settings["tuning_adg_by_fold"], 64)
	ft, _ := strconv.ParseFloat(both.Rows[1].Settings["tuning_adg_by_fold"], 64)
	if ft < st-1e-9 {
		t.Errorf("tuning ADG: FEBRi-slim %.6f below slim %.6f", ft, st)
	}
}

// febr-blend takes its bases' searches from their own rows in the same
// fold: a run of every base and the blend makes one fit per base more
// than the blend alone (each base row's refit), and the blend's bases
// are the rows' choices. It fails if the blend searches a base again.
func TestRun_blendSharesItsBasesSearches(t *testing.T) {
	d := clustered(5, 120, 90, 4, 14)
	run := func(models ...string) (*api.Report, int) {
		opt := Options{
			Folds: 1, Seed: 2, Models: models,
			Grid: Grid{K: []int{10, 20}, L1: []float64{1}, L2: []float64{1}, Factors: []int{4, 8}, Lambda: []float64{1e-2}},
		}
		return runCounting(t, d, opt)
	}
	bases := febr.BlendBases()
	all, nAll := run(append(slices.Clone(bases), febr.BlendName)...)
	_, nBlend := run(febr.BlendName)
	if nAll != nBlend+len(bases) {
		t.Errorf("the %d bases and the blend made %d fits, the blend alone %d: want %d", len(bases), nAll, nBlend, nBlend+len(bases))
	}
	blend := all.Rows[len(bases)]
	if blend.Model != febr.BlendName {
		t.Fatalf("row %d is %s", len(bases), blend.Model)
	}
	for k, b := range bases {
		for key, v := range all.Rows[k].Params {
			if got, ok := blend.Params[b+"."+key]; ok && got != v {
				t.Errorf("the blend's %s.%s=%v, the %s row chose %v", b, key, got, b, v)
			}
		}
	}
}

// runCounting is Run with the number of progress steps it reported.
func runCounting(t *testing.T, d *Dataset, opt Options) (*api.Report, int) {
	t.Helper()
	steps := 0
	opt.Progress = func(string, int, int) { steps++ }
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep, steps
}
