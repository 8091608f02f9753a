package jobs

import (
	"slices"
	"testing"

	"recsys/recsys"
	"recsys/recsys/serving"
)

// TestTrainableNames_registry: what a job can train is the recommenders of
// package recsys, then one name per other kind, each a kind that package
// serving can load back once persisted (the content metric among them).
func TestTrainableNames_registry(t *testing.T) {
	names := TrainableNames()
	if !slices.Equal(names[:len(recsys.Names())], recsys.Names()) {
		t.Fatalf("trainable %q do not start with the recommenders %q", names, recsys.Names())
	}
	others := names[len(recsys.Names()):]
	if !slices.Equal(others, serving.Kinds()) {
		t.Errorf("kinds with a trainer %q, kinds serving decodes %q", others, serving.Kinds())
	}
	if !slices.Contains(others, serving.ContentModelName) {
		t.Errorf("trainable %q lack the content metric", names)
	}
	if len(distinct(names)) != len(names) {
		t.Errorf("trainable %q repeat a name", names)
	}
}
