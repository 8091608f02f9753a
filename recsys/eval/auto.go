package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// AutoRow is the Model of the report row of auto mode's choice.
const AutoRow = api.AutoReportRow

// AutoChoice is the index of the candidate auto mode activates: the one
// with the highest validation ADG, the first of equals (dissertation
// §4.7.3's selection rule); -1 when none has an ADG above -1 (none, or
// NaN). jobs' chooseActive and the report's auto row both use it.
func AutoChoice(validationADG []float64) int {
	best, bestADG := -1, -1.0
	for k, adg := range validationADG {
		if adg > bestADG {
			best, bestADG = k, adg
		}
	}
	return best
}

// AddAutoRow appends to r the row of auto mode over its rows: in every
// fold, the test measures of the row AutoChoice picks by validation ADG,
// then their mean and standard error over folds as every row has them
// (over the test users for the time protocol's single split). Its
// settings name the choice per fold; its TrainSeconds are the chosen
// settings' mean refit time. It adds nothing, and says why, when the
// report has fewer than two rows with per-fold values, rows with different
// numbers of folds, or already an auto row.
func AddAutoRow(r *api.Report) error {
	var rows []api.ReportRow
	for _, row := range r.Rows {
		if row.Model == AutoRow {
			return fmt.Errorf("eval: the report has an auto row already")
		}
		if len(row.Folds) > 0 {
			rows = append(rows, row)
		}
	}
	if len(rows) < 2 {
		return fmt.Errorf("eval: an auto row needs two rows with per-fold values or more, not %d", len(rows))
	}
	folds := len(rows[0].Folds)
	chosen := make([]api.FoldValues, folds)
	var by, params, vals []string
	for _, row := range rows {
		if len(row.Folds) != folds {
			return fmt.Errorf("eval: row %s has %d folds, row %s %d", displayName(row), len(row.Folds), displayName(rows[0]), folds)
		}
	}
	for f := range folds {
		adg := make([]float64, len(rows))
		for k, row := range rows {
			adg[k] = row.Folds[f].ValidationADG
		}
		c := AutoChoice(adg)
		if c < 0 {
			return fmt.Errorf("eval: no row has a validation ADG in fold %d", f+1)
		}
		chosen[f] = rows[c].Folds[f]
		chosen[f].Model = displayName(rows[c])
		by = append(by, chosen[f].Model)
		params = append(params, formatParams(chosen[f].Params))
		vals = append(vals, formatADG(chosen[f].ValidationADG))
	}
	row := api.ReportRow{
		Model:   AutoRow,
		Params:  map[string]float64{},
		Metrics: foldMetrics(chosen, r.Protocol == Time),
		Folds:   chosen,
		Settings: map[string]string{
			"selection":              "per fold, the row with the best validation adg (auto mode's rule)",
			"chosen_by_fold":         strings.Join(by, "; "),
			"params_by_fold":         strings.Join(params, "; "),
			"validation_adg_by_fold": strings.Join(vals, "; "),
		},
	}
	if r.Protocol == Time && folds == 1 {
		row.Settings["se"] = "over the test users (one split)"
	}
	for _, c := range chosen {
		row.TrainSeconds += c.TrainSeconds / float64(folds)
	}
	r.Rows = append(r.Rows, row)
	return nil
}

// foldMetrics is the mean and standard error over folds of every test
// measure; with overUsers and a single fold, the standard errors are over
// the test users instead.
func foldMetrics(folds []api.FoldValues, overUsers bool) map[string]api.MetricValue {
	out := map[string]api.MetricValue{}
	for _, key := range metrics.Names {
		xs := make([]float64, len(folds))
		for f, v := range folds {
			xs[f] = v.Test[key]
		}
		mean, se := meanSE(xs)
		if overUsers && len(folds) == 1 {
			se = folds[0].TestUserSE[key]
		}
		out[key] = api.MetricValue{Mean: mean, SE: se}
	}
	return out
}

// foldValues is r as a report row's fold (model: the row's name).
func foldValues(model string, r *foldResult, overUsers bool) api.FoldValues {
	v := api.FoldValues{Model: model, Params: r.params, ValidationADG: r.valADG, Test: map[string]float64{}, TrainSeconds: r.trainSeconds}
	if v.Params == nil {
		v.Params = map[string]float64{}
	}
	for m, key := range metrics.Names {
		v.Test[key] = r.test[m]
	}
	if overUsers {
		v.TestUserSE = map[string]float64{}
		for m, key := range metrics.Names {
			v.TestUserSE[key] = r.userSE[m]
		}
	}
	return v
}

// MergeReports joins reports of the same data set, protocol, folds and
// seed (so the same splits), run on different models, into one with their
// rows in order, less their auto rows, and the auto row over all of them.
// Seconds is the sum of the runs' seconds.
func MergeReports(reps []*api.Report) (*api.Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("eval: no report to merge")
	}
	first := reps[0]
	out := &api.Report{CreatedAt: first.CreatedAt, Kind: first.Kind, Dataset: first.Dataset, Protocol: first.Protocol, Folds: first.Folds, Seed: first.Seed}
	for k, r := range reps {
		if r.Dataset != first.Dataset || r.Protocol != first.Protocol || r.Folds != first.Folds || r.Seed != first.Seed || r.Kind != first.Kind {
			return nil, fmt.Errorf("eval: report %d is of %s %s, %d folds, seed %d; report 1 of %s %s, %d folds, seed %d: they do not share splits",
				k+1, r.Dataset, r.Protocol, r.Folds, r.Seed, first.Dataset, first.Protocol, first.Folds, first.Seed)
		}
		out.Seconds += r.Seconds
		if r.CreatedAt.After(out.CreatedAt) {
			out.CreatedAt = r.CreatedAt
		}
		for _, row := range r.Rows {
			if row.Model == AutoRow {
				continue
			}
			if slices.ContainsFunc(out.Rows, func(o api.ReportRow) bool { return displayName(o) == displayName(row) }) {
				return nil, fmt.Errorf("eval: row %s is in two of the reports", displayName(row))
			}
			out.Rows = append(out.Rows, row)
		}
	}
	if err := AddAutoRow(out); err != nil {
		return nil, err
	}
	return out, nil
}
