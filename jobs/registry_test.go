package jobs

import (
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/content"
)

// TestTrainableNames_registry: what a job can train is the recommenders of
// package recsys, then one name per other kind, each a kind that can be
// read back once persisted (the content metric among them).
func TestTrainableNames_registry(t *testing.T) {
	names := recsys.Kinds()
	if !slices.Equal(names[:len(recsys.Names())], recsys.Names()) {
		t.Fatalf("trainable %q do not start with the recommenders %q", names, recsys.Names())
	}
	others := names[len(recsys.Names()):]
	for _, n := range others {
		if k, err := recsys.KindOf(n); err != nil || k.Train == nil || k.Decode == nil {
			t.Errorf("kind %q: trainer and decoder registered %v, %v (%v)", n, k.Train != nil, k.Decode != nil, err)
		}
	}
	if !slices.Contains(others, content.Name) {
		t.Errorf("trainable %q lack the content metric", names)
	}
	if len(distinct(names)) != len(names) {
		t.Errorf("trainable %q repeat a name", names)
	}
}
