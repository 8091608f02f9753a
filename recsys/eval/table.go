package eval

import (
	"fmt"
	"io"

	"recsys/api"
	"recsys/recsys/eval/table"
	"recsys/recsys/metrics"
)

// WriteTable prints a report like dissertation Table 4.3: one row per
// model, one column per measure as "mean (se)", then the chosen parameters
// and the training time.
func WriteTable(w io.Writer, r *api.Report) error {
	cols := []table.Column{{Head: "model", Cell: displayName}}
	cols = append(cols, table.Measures(metrics.Names[:], table.Zero)...)
	cols = append(cols, table.Params("-"), table.TrainSeconds)
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
