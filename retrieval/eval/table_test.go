package eval

import (
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// The tables of fixed reports, byte for byte (as retrieval printed them
// before the table writer was shared with recsys/eval): parameters sorted,
// empty parameters, a measure missing from a row.
func TestWriteTable_fixed(t *testing.T) {
	mv := func(m, se float64) api.MetricValue { return api.MetricValue{Mean: m, SE: se} }
	rep := &api.Report{
		Dataset: "wine", Protocol: "80/20 random splits, validation 25% of training", Splits: 3, Seed: 7, Seconds: 81.26,
		Rows: []api.ReportRow{
			{Method: "euclidean", Params: map[string]float64{"k": 3, "rank": 13}, TrainSeconds: 0.001,
				Metrics: map[string]api.MetricValue{KeyKNNError: mv(0.0556, 0.0123), KeyMAP: mv(0.8123, 0.004), KeyAUC: mv(0.9, 0.001), KeyP1: mv(0.95, 0.01), KeyP10: mv(0.88, 0.02)}},
			{Method: "frml", Params: map[string]float64{"kappa": 0.1, "k": 5, "lambda": 0.1, "rank": 7}, TrainSeconds: 12.345,
				Metrics: map[string]api.MetricValue{KeyKNNError: mv(0.02, 0.001), KeyMAP: mv(0.91, 0.0049), KeyP1: mv(0.97, 0), KeyP10: mv(0.93, 0.00005)}},
			{Method: "mlr-map", Params: map[string]float64{}, TrainSeconds: 300},
		},
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	want := `dataset wine, 80/20 random splits, validation 25% of training, 3 splits, seed 7 (81.3s)
method     knn_error        map              auc              p@1              p@10             params                           train s
euclidean  0.0556 (0.0123)  0.8123 (0.0040)  0.9000 (0.0010)  0.9500 (0.0100)  0.8800 (0.0200)  k=3 rank=13                      0.00
frml       0.0200 (0.0010)  0.9100 (0.0049)  0.0000 (0.0000)  0.9700 (0.0000)  0.9300 (0.0001)  k=5 kappa=0.1 lambda=0.1 rank=7  12.35
mlr-map    0.0000 (0.0000)  0.0000 (0.0000)  0.0000 (0.0000)  0.0000 (0.0000)  0.0000 (0.0000)                                   300.00
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteColdStartTable_fixed(t *testing.T) {
	mv := func(m, se float64) api.MetricValue { return api.MetricValue{Mean: m, SE: se} }
	rep := &api.Report{
		Kind: "retrieval-coldstart", Dataset: "ml-100k", Splits: 3, Seed: 1, Seconds: 42.42,
		Protocol: "10% of items held out; cold items scored by min distance to the 20 latest positives",
		Rows: []api.ReportRow{
			{Method: "frml", Params: map[string]float64{"iterations": 10000, "neighbours": 10}, TrainSeconds: 3.21,
				Metrics: map[string]api.MetricValue{KeyNbMAP: mv(0.1234, 0.01), KeyNbP10: mv(0.2, 0.02), KeyRec10: mv(0.3, 0.03), KeyColdMAP: mv(0.4, 0.04)}},
			{Method: BaselineRandom, Params: map[string]float64{"neighbours": 10}, TrainSeconds: 0,
				Metrics: map[string]api.MetricValue{KeyRec10: mv(0.05, 0.001), KeyColdMAP: mv(0.06, 0.002)}},
			{Method: BaselineOraclePop, TrainSeconds: 0},
		},
	}
	var b strings.Builder
	if err := WriteColdStartTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	want := `dataset ml-100k, 3 splits, seed 1 (42.4s)
10% of items held out; cold items scored by min distance to the 20 latest positives
method             nb_map           nb_p@10          rec@10           cold_map         train s
frml               0.1234 (0.0100)  0.2000 (0.0200)  0.3000 (0.0300)  0.4000 (0.0400)  3.21
random             -                -                0.0500 (0.0010)  0.0600 (0.0020)  0.00
oracle-popularity  -                -                -                -                0.00
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
