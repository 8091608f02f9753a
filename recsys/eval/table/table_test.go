package table

import (
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

func TestWrite(t *testing.T) {
	rows := []api.ReportRow{
		{Method: "a", Params: map[string]float64{"z": 1, "k": 0.5}, Metrics: map[string]api.MetricValue{"m": {Mean: 0.25, SE: 0.01}}, TrainSeconds: 1.234},
		{Method: "long name"},
	}
	cols := []Column{{Head: "method", Cell: func(r api.ReportRow) string { return r.Method }}}
	cols = append(cols, Measures([]string{"m"}, "-")...)
	cols = append(cols, Params("none"), TrainSeconds)
	var b strings.Builder
	if err := Write(&b, "title", cols, rows); err != nil {
		t.Fatal(err)
	}
	want := "title\n" +
		"method     m                params     train s\n" +
		"a          0.2500 (0.0100)  k=0.5 z=1  1.23\n" +
		"long name  -                none       0.00\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFormatParams(t *testing.T) {
	for _, tc := range []struct {
		p    map[string]float64
		want string
	}{
		{nil, ""},
		{map[string]float64{"l2": 1e-7, "k": 50, "l1": 1}, "k=50 l1=1 l2=1e-07"},
	} {
		if got := FormatParams(tc.p); got != tc.want {
			t.Errorf("FormatParams(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	if Zero != "0.0000 (0.0000)" {
		t.Errorf("Zero = %q", Zero)
	}
}
