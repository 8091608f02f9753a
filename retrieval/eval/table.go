package eval

import (
	"fmt"
	"io"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/eval/table"
)

// methodColumn names a row by its method.
var methodColumn = table.Column{Head: "method", Cell: func(r api.ReportRow) string { return r.Method }}

// WriteTable prints a retrieval report: one row per method, mean (standard
// error) over splits per measure, the chosen parameters and training time.
func WriteTable(w io.Writer, r *api.Report) error {
	cols := append([]table.Column{methodColumn}, table.Measures(MetricKeys, table.Zero)...)
	cols = append(cols, table.Params(""), table.TrainSeconds)
	title := fmt.Sprintf("dataset %s, %s, %d splits, seed %d (%.1fs)", r.Dataset, r.Protocol, r.Splits, r.Seed, r.Seconds)
	return table.Write(w, title, cols, r.Rows)
}

// WriteColdStartTable prints a cold-start report: mean (standard error)
// over splits; "-" where a row has no such measure.
func WriteColdStartTable(w io.Writer, r *api.Report) error {
	cols := append([]table.Column{methodColumn}, table.Measures(ColdStartKeys, "-")...)
	cols = append(cols, table.TrainSeconds)
	title := fmt.Sprintf("dataset %s, %d splits, seed %d (%.1fs)\n%s", r.Dataset, r.Splits, r.Seed, r.Seconds, r.Protocol)
	return table.Write(w, title, cols, r.Rows)
}
