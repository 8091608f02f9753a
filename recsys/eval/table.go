package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/eval/table"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// WriteTable prints a report like dissertation Table 4.3: one row per
// model, one column per measure as "mean (se)", then the chosen parameters
// and the training time.
func WriteTable(w io.Writer, r *api.Report) error {
	cols := []table.Column{{Head: "model", Cell: displayName}}
	cols = append(cols, table.Measures(metrics.Names[:], table.Zero)...)
	params := table.Params("-")
	cell := params.Cell
	params.Cell = func(r api.ReportRow) string {
		// The auto row names its choice per fold.
		if by := r.Settings["chosen_by_fold"]; by != "" {
			return "chosen: " + by
		}
		// A choice at the edge of the (extended) grid says so.
		fields := strings.Fields(cell(r))
		for k, f := range fields {
			if slices.Contains(strings.Fields(r.Settings["grid_edge"]), f) {
				fields[k] = f + " (grid edge)"
			}
		}
		return strings.Join(fields, " ")
	}
	cols = append(cols, params, table.TrainSeconds)
	title := fmt.Sprintf("dataset %s, protocol %s, %d folds, seed %d (%.1fs)", r.Dataset, r.Protocol, r.Folds, r.Seed, r.Seconds)
	return table.Write(w, title, cols, r.Rows)
}

// displayName is the variant, else the model, else the method.
func displayName(row api.ReportRow) string {
	name := row.Model
	if name == "" {
		name = row.Method
	}
	if row.Variant != "" {
		name = row.Variant
	}
	return name
}
