package eval

import (
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// fixedReport exercises every way a row is named and every cell: a model
// row, a method row, a variant row, empty parameters and a missing measure.
func fixedReport() *api.Report {
	all := func(base float64) map[string]api.MetricValue {
		m := map[string]api.MetricValue{}
		for k, name := range []string{"adg", "rec@10", "map", "ndcg", "ndcg@10", "atop", "auc", "p@10", "mrr"} {
			m[name] = api.MetricValue{Mean: base + float64(k)/100, SE: base / 100}
		}
		return m
	}
	partial := all(0.05)
	delete(partial, "atop")
	return &api.Report{
		Dataset: "ml-100k", Protocol: "leave-one-out", Folds: 5, Seed: 42, Seconds: 12.345,
		Rows: []api.ReportRow{
			{Model: "popular", Params: map[string]float64{}, Metrics: all(0.1), TrainSeconds: 0.004},
			{Model: "slim", Params: map[string]float64{"k": 50, "l1": 0.5, "l2": 1e-7}, Metrics: all(0.31234), TrainSeconds: 12.5},
			{Method: "febr", Model: "", Params: map[string]float64{"lambda": 0.25}, Metrics: partial, TrainSeconds: 100},
			{Model: "kunn", Variant: "kunn (no time)", Params: nil, Metrics: all(0.2), TrainSeconds: 1234.567},
		},
	}
}

// The table of a fixed report, byte for byte (as recsys/eval printed it
// before the table writer was shared with retrieval/eval).
func TestWriteTable_fixed(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	want := `dataset ml-100k, protocol leave-one-out, 5 folds, seed 42 (12.3s)
model           adg              rec@10           map              ndcg             ndcg@10          atop             auc              p@10             mrr              params                train s
popular         0.1000 (0.0010)  0.1100 (0.0010)  0.1200 (0.0010)  0.1300 (0.0010)  0.1400 (0.0010)  0.1500 (0.0010)  0.1600 (0.0010)  0.1700 (0.0010)  0.1800 (0.0010)  -                     0.00
slim            0.3123 (0.0031)  0.3223 (0.0031)  0.3323 (0.0031)  0.3423 (0.0031)  0.3523 (0.0031)  0.3623 (0.0031)  0.3723 (0.0031)  0.3823 (0.0031)  0.3923 (0.0031)  k=50 l1=0.5 l2=1e-07  12.50
febr            0.0500 (0.0005)  0.0600 (0.0005)  0.0700 (0.0005)  0.0800 (0.0005)  0.0900 (0.0005)  0.0000 (0.0000)  0.1100 (0.0005)  0.1200 (0.0005)  0.1300 (0.0005)  lambda=0.25           100.00
kunn (no time)  0.2000 (0.0020)  0.2100 (0.0020)  0.2200 (0.0020)  0.2300 (0.0020)  0.2400 (0.0020)  0.2500 (0.0020)  0.2600 (0.0020)  0.2700 (0.0020)  0.2800 (0.0020)  -                     1234.57
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
