// Package table prints an evaluation report (api.Report) as a text table:
// a title, then one line per row, columns aligned with two spaces between
// them (text/tabwriter). The offline harnesses recsys/eval and
// retrieval/eval choose their columns; the layout is shared.
package table

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/recsys-engine/recsys/api"
)

// Column is one column: its heading and the cell of each row.
type Column struct {
	Head string
	Cell func(api.ReportRow) string
}

// Write prints title on its own line, then the heading and the rows.
func Write(w io.Writer, title string, cols []Column, rows []api.ReportRow) error {
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cells := make([]string, len(cols))
	for k, c := range cols {
		cells[k] = c.Head
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
	for _, row := range rows {
		for k, c := range cols {
			cells[k] = c.Cell(row)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// MeanSE renders a measure as "mean (standard error)".
func MeanSE(v api.MetricValue) string { return fmt.Sprintf("%.4f (%.4f)", v.Mean, v.SE) }

// Zero is MeanSE of the zero value: what a row without a measure shows in
// a table whose rows are expected to have them all.
var Zero = MeanSE(api.MetricValue{})

// Measures are one column per key, headed by the key, showing MeanSE of
// the row's measure, or absent when the row has none.
func Measures(keys []string, absent string) []Column {
	cols := make([]Column, len(keys))
	for k, key := range keys {
		cols[k] = Column{Head: key, Cell: func(r api.ReportRow) string {
			if v, ok := r.Metrics[key]; ok {
				return MeanSE(v)
			}
			return absent
		}}
	}
	return cols
}

// Params is the "params" column: FormatParams of the row's parameters, or
// none when it has none.
func Params(none string) Column {
	return Column{Head: "params", Cell: func(r api.ReportRow) string {
		if s := FormatParams(r.Params); s != "" {
			return s
		}
		return none
	}}
}

// TrainSeconds is the "train s" column: the mean training time.
var TrainSeconds = Column{Head: "train s", Cell: func(r api.ReportRow) string {
	return fmt.Sprintf("%.2f", r.TrainSeconds)
}}

// FormatParams renders parameters as "k=50 l1=1 l2=0.1", keys sorted ("" for
// none).
func FormatParams(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(p[k], 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}
