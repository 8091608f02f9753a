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

// The report order of the recommenders, which every list of models follows
// (GET /models, evaluation tables, the README): the built-in kinds, then
// FEBR's, then the factorisations. It comes from the registration order,
// so a new package's init must not reorder it by accident.
func TestNames_reportOrder(t *testing.T) {
	want := []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta", "trending", "latest",
		"febr", "febr-i-cosine", "febr-u-cosine", "febr-iu-cosine", "febr-i-kunn", "febr-u-kunn", "febr-iu-kunn", "febr-i-slim", "febr-blend",
		"bpr", "wrmf", "ials", "mfauc"}
	if got := recsys.Names(); !slices.Equal(got, want) {
		t.Errorf("recommenders in the order %q, want %q", got, want)
	}
	if got := recsys.Kinds(); !slices.Equal(got, append(want, content.Name)) {
		t.Errorf("kinds in the order %q, want the recommenders then %q", got, content.Name)
	}
}
