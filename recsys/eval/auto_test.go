package eval

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

func TestAutoChoice(t *testing.T) {
	for _, tc := range []struct {
		adg  []float64
		want int
	}{
		{nil, -1},
		{[]float64{0.2, 0.3, 0.1}, 1},
		{[]float64{0.3, 0.2, 0.3}, 0}, // the first of equals
		{[]float64{math.NaN(), 0.1}, 1},
		{[]float64{math.NaN()}, -1},
		{[]float64{0, 0}, 0},
	} {
		if got := AutoChoice(tc.adg); got != tc.want {
			t.Errorf("AutoChoice(%v) = %d, want %d", tc.adg, got, tc.want)
		}
	}
}

// fold is a hand-built fold of a report row.
func fold(val, adg, ndcg, seconds float64) api.FoldValues {
	return api.FoldValues{Params: map[string]float64{"k": seconds}, ValidationADG: val,
		Test: map[string]float64{"adg": adg, "ndcg@10": ndcg}, TrainSeconds: seconds}
}

// A hand-built report with known validation and test values per fold:
// fold 1 chooses b, fold 2 a (tied with c, the first of equals), fold 3 c.
func TestAddAutoRow_handBuilt(t *testing.T) {
	rep := &api.Report{Protocol: Standard, Folds: 3, Rows: []api.ReportRow{
		{Model: "a", Folds: []api.FoldValues{fold(0.20, 0.90, 0.90, 9), fold(0.26, 0.27, 0.40, 2), fold(0.10, 0.90, 0.90, 9)}},
		{Model: "b", Folds: []api.FoldValues{fold(0.25, 0.30, 0.50, 1), fold(0.25, 0.90, 0.90, 9), fold(0.20, 0.90, 0.90, 9)}},
		{Model: "febr", Variant: "FEBRi-slim", Folds: []api.FoldValues{fold(0.22, 0.90, 0.90, 9), fold(0.26, 0.90, 0.90, 9), fold(0.30, 0.33, 0.30, 6)}},
		{Model: "no folds"}, // a row without per-fold values is no candidate
	}}
	if err := AddAutoRow(rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 5 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	auto := rep.Rows[4]
	if auto.Model != AutoRow || auto.Settings["chosen_by_fold"] != "b; a; FEBRi-slim" ||
		auto.Settings["params_by_fold"] != "k=1; k=2; k=6" || auto.Settings["validation_adg_by_fold"] != "0.2500; 0.2600; 0.3000" {
		t.Fatalf("auto row %+v", auto)
	}
	// ADG 0.30, 0.27, 0.33: mean 0.30, sample sd 0.03, se 0.03/√3.
	// NDCG@10 0.5, 0.4, 0.3: mean 0.4, sd 0.1, se 0.1/√3.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if m := auto.Metrics["adg"]; !near(m.Mean, 0.30) || !near(m.SE, 0.03/math.Sqrt(3)) {
		t.Errorf("auto ADG %+v", m)
	}
	if m := auto.Metrics["ndcg@10"]; !near(m.Mean, 0.4) || !near(m.SE, 0.1/math.Sqrt(3)) {
		t.Errorf("auto NDCG@10 %+v", m)
	}
	if m := auto.Metrics["map"]; m.Mean != 0 || m.SE != 0 {
		t.Errorf("auto MAP %+v, want the folds' absent values (0)", m)
	}
	if !near(auto.TrainSeconds, 3) {
		t.Errorf("auto train seconds %g, want (1+2+6)/3", auto.TrainSeconds)
	}
	if names := []string{auto.Folds[0].Model, auto.Folds[1].Model, auto.Folds[2].Model}; !slices.Equal(names, []string{"b", "a", "FEBRi-slim"}) {
		t.Errorf("auto folds name %v", names)
	}
	var table strings.Builder
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "chosen: b; a; FEBRi-slim") {
		t.Errorf("the table does not name the choice:\n%s", table.String())
	}
	if err := AddAutoRow(rep); err == nil {
		t.Error("a second auto row was added")
	}

	// The time protocol's single split: standard errors over the test
	// users, the chosen row's.
	one := &api.Report{Protocol: Time, Folds: 1, Rows: []api.ReportRow{
		{Model: "a", Folds: []api.FoldValues{fold(0.1, 0.2, 0.3, 1)}},
		{Model: "b", Folds: []api.FoldValues{fold(0.2, 0.25, 0.35, 1)}},
	}}
	one.Rows[0].Folds[0].TestUserSE = map[string]float64{"adg": 0.5}
	one.Rows[1].Folds[0].TestUserSE = map[string]float64{"adg": 0.01}
	if err := AddAutoRow(one); err != nil {
		t.Fatal(err)
	}
	if m := one.Rows[2].Metrics["adg"]; m.Mean != 0.25 || m.SE != 0.01 || one.Rows[2].Settings["se"] == "" {
		t.Errorf("time auto row %+v", one.Rows[2])
	}

	for name, bad := range map[string]*api.Report{
		"one row": {Rows: []api.ReportRow{{Model: "a", Folds: []api.FoldValues{fold(0.1, 0.2, 0.3, 1)}}}},
		"folds differ": {Rows: []api.ReportRow{{Model: "a", Folds: []api.FoldValues{fold(0.1, 0.2, 0.3, 1)}},
			{Model: "b", Folds: []api.FoldValues{fold(0.1, 0.2, 0.3, 1), fold(0.1, 0.2, 0.3, 1)}}}},
		"no validation ADG": {Rows: []api.ReportRow{{Model: "a", Folds: []api.FoldValues{fold(math.NaN(), 0.2, 0.3, 1)}},
			{Model: "b", Folds: []api.FoldValues{fold(-2, 0.2, 0.3, 1)}}}},
	} {
		n := len(bad.Rows)
		if err := AddAutoRow(bad); err == nil || len(bad.Rows) != n {
			t.Errorf("%s: AddAutoRow gave %v, %d rows", name, err, len(bad.Rows))
		}
	}
}

// Reports of the same splits merge into one with the auto row over all
// their rows; reports of other splits, or sharing a row, do not.
func TestMergeReports(t *testing.T) {
	mk := func(seed int64, names ...string) *api.Report {
		r := &api.Report{Dataset: "d", Protocol: Standard, Folds: 1, Seed: seed, Seconds: 1}
		for k, n := range names {
			r.Rows = append(r.Rows, api.ReportRow{Model: n, Folds: []api.FoldValues{fold(float64(k)/10, float64(k), 0, 1)}})
		}
		return r
	}
	a, b := mk(1, "x", "y"), mk(1, "z", "w")
	if err := AddAutoRow(a); err != nil {
		t.Fatal(err)
	}
	m, err := MergeReports([]*api.Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range m.Rows {
		names = append(names, r.Model)
	}
	// Validation ADG x 0, y 0.1, z 0, w 0.1: y, the first of equals.
	if !slices.Equal(names, []string{"x", "y", "z", "w", AutoRow}) || m.Rows[4].Settings["chosen_by_fold"] != "y" || m.Seconds != 2 {
		t.Errorf("merged rows %v, auto %v, %g s", names, m.Rows[4].Settings, m.Seconds)
	}
	if _, err := MergeReports([]*api.Report{a, mk(2, "z")}); err == nil {
		t.Error("reports of two seeds merged")
	}
	if _, err := MergeReports([]*api.Report{a, mk(1, "y")}); err == nil {
		t.Error("a row of two reports merged")
	}
}
