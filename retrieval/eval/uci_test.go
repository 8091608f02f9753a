package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// uciDir is where the UCI sets live relative to this package
// (../shared/datasets from the repository root).
var uciDir = filepath.Join("..", "..", "..", "shared", "datasets", "uci")

// TestUCIEvaluation runs the eval-retrieval protocol on the UCI sets named
// in RECSYS_UCI_EVAL (comma-separated, e.g. "iris,wine"); it is skipped
// otherwise because it takes minutes. RECSYS_UCI_SPLITS, RECSYS_UCI_METHODS,
// RECSYS_UCI_MAXTRAIN, RECSYS_UCI_CGRID (MLR/R-MLR C values),
// RECSYS_UCI_LGRID (R-MLR λ values) and RECSYS_UCI_OUT (a directory for
// JSON reports) adjust it.
func TestUCIEvaluation(t *testing.T) {
	sets := os.Getenv("RECSYS_UCI_EVAL")
	if sets == "" {
		t.Skip("set RECSYS_UCI_EVAL=iris,wine,... to run the UCI evaluation")
	}
	opt := Options{Seed: 1}
	if v := os.Getenv("RECSYS_UCI_SPLITS"); v != "" {
		opt.Splits, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("RECSYS_UCI_MAXTRAIN"); v != "" {
		opt.MaxTrain, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("RECSYS_UCI_METHODS"); v != "" {
		opt.Methods = strings.Split(v, ",")
	}
	floats := func(key string) []float64 {
		var out []float64
		for _, f := range strings.Split(os.Getenv(key), ",") {
			if v, err := strconv.ParseFloat(f, 64); err == nil {
				out = append(out, v)
			}
		}
		return out
	}
	opt.Grid.C = floats("RECSYS_UCI_CGRID")
	opt.Grid.RowSparsity = floats("RECSYS_UCI_LGRID")
	opt.Progress = func(line string) { t.Log(line) }
	for _, name := range strings.Split(sets, ",") {
		ds, err := ReadCSV(filepath.Join(uciDir, name+".csv"), "label")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Evaluate(context.Background(), ds, opt)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		if err := WriteTable(&sb, rep); err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + sb.String())
		if dir := os.Getenv("RECSYS_UCI_OUT"); dir != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(sb.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
