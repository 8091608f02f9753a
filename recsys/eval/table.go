package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"recsys/api"
	"recsys/recsys/metrics"
)

// WriteTable prints a report like dissertation Table 4.3: one row per
// model, one column per measure as "mean (se)", then the chosen parameters
// and the training time.
func WriteTable(w io.Writer, r *api.Report) error {
	fmt.Fprintf(w, "dataset %s, protocol %s, %d folds, seed %d (%.1fs)\n", r.Dataset, r.Protocol, r.Folds, r.Seed, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"model"}
	for _, k := range metrics.Names {
		head = append(head, k)
	}
	head = append(head, "params", "train s")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range r.Rows {
		name := row.Model
		if name == "" {
			name = row.Method
		}
		if row.Variant != "" {
			name = row.Variant
		}
		cells := []string{name}
		for _, k := range metrics.Names {
			v := row.Metrics[k]
			cells = append(cells, fmt.Sprintf("%.4f (%.4f)", v.Mean, v.SE))
		}
		cells = append(cells, formatParams(row.Params), fmt.Sprintf("%.2f", row.TrainSeconds))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
