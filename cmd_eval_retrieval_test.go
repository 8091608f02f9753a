package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// TestEvalRetrieval_coldstartCLI: `eval-retrieval --coldstart` rejects bad
// flags with a message naming them, and on ml-100k (../shared/datasets from
// the repository root) prints the table with the baselines.
func TestEvalRetrieval_coldstartCLI(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join("..", "shared", "datasets", "ml-100k")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--coldstart", "--data", dir, "--holdout", "0.95"}, "--holdout"},
		{[]string{"--coldstart", "--data", dir, "--methods", "euclidean,bogus"}, "unknown method"},
		{[]string{"--coldstart", "--data", dir, "--aggregate", "max", "--methods", "euclidean", "--splits", "1"}, "aggregate"},
		{[]string{"--coldstart", "--data", filepath.Join(t.TempDir(), "none"), "--methods", "euclidean"}, "eval-retrieval"},
	} {
		var out, errb bytes.Buffer
		err := runEvalRetrieval(ctx, tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
	datasettest.Require(t, filepath.Join(dir, "u.data"))
	var out, errb bytes.Buffer
	if err := runEvalRetrieval(ctx, []string{"--coldstart", "--data", dir, "--methods", "euclidean", "--splits", "1",
		"--json", filepath.Join(t.TempDir(), "r.json")}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	for _, want := range []string{"euclidean", "random", "feature-popularity", "oracle-popularity", "rec@10", "nb_p@10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
