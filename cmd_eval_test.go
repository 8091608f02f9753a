package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// eval --time-budget: a negative budget is refused naming the flag; a
// budget shorter than any fit leaves every grid point but the first out,
// which the JSON report's row lists (skipped_by_fold, with each point's
// predicted and measured seconds in points_by_fold) and stderr names.
func TestEval_timeBudget(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "e.csv")
	var b strings.Builder
	for u := range 60 {
		for j := range 8 {
			fmt.Fprintf(&b, "u%d,i%d,1\n", u, (u+3*j)%40)
		}
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runEval(t.Context(), []string{"--data", csv, "--format", "csv", "--time-budget", "-1s"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--time-budget") {
		t.Errorf("--time-budget -1s: %v, want an error naming the flag", err)
	}
	out := filepath.Join(dir, "r.json")
	var stderr strings.Builder
	err := runEval(t.Context(), []string{"--data", csv, "--format", "csv", "--models", "itemknn", "--k-grid", "1,2,4", "--folds", "1",
		"--time-budget", "1ns", "--json", out}, io.Discard, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep api.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[0]
	if row.Params["k"] != 1 || !strings.HasPrefix(row.Settings["skipped_by_fold"], "k=2: predicted ") || !strings.HasPrefix(row.Settings["points_by_fold"], "k=1 ") {
		t.Errorf("itemknn params %v, settings %v; want k=1 and the skipped points", row.Params, row.Settings)
	}
	if !strings.Contains(stderr.String(), "eval: --time-budget 1ns left grid points of itemknn out") {
		t.Errorf("stderr %q does not name the skipped model", stderr.String())
	}
}
