package retrieval

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"recsys/api"
)

// WriteTable prints a retrieval report: one row per method, mean (standard
// error) over splits per measure, the chosen parameters and training time.
func WriteTable(w io.Writer, r *api.Report) error {
	fmt.Fprintf(w, "dataset %s, %s, %d splits, seed %d (%.1fs)\n", r.Dataset, r.Protocol, r.Splits, r.Seed, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "method\t"+strings.Join(MetricKeys, "\t")+"\tparams\ttrain s")
	for _, row := range r.Rows {
		cells := []string{row.Method}
		for _, k := range MetricKeys {
			v := row.Metrics[k]
			cells = append(cells, fmt.Sprintf("%.4f (%.4f)", v.Mean, v.SE))
		}
		var keys []string
		for k := range row.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var ps []string
		for _, k := range keys {
			ps = append(ps, fmt.Sprintf("%s=%g", k, row.Params[k]))
		}
		cells = append(cells, strings.Join(ps, " "), fmt.Sprintf("%.2f", row.TrainSeconds))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
