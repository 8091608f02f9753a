package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// The service trains febr (FEBRi over the SLIM affinity) like the other
// models: parameters chosen on the validation split, refitted on all the
// data with the iteration count found there, ready to score.
func TestTrainModels_febr(t *testing.T) {
	snap := clusteredSnapshot(t, 1, 60, 12, 10)
	opts := DefaultTrainOptions
	opts.Grid = []int{5, 10, 20}
	out, err := trainModels(context.Background(), snap, []string{"febr"}, opts, func(string, float64) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d models", len(out))
	}
	info, m := out[0].served.Info, out[0].served.Model.(recsys.Model)
	if info.Name != "febr" || info.Params["k"] == 0 || info.Params["lambda"] == 0 || info.Params["l1"] == 0 {
		t.Fatalf("info %+v", info)
	}
	if info.Validation["adg"] <= 0 {
		t.Fatalf("validation %v", info.Validation)
	}
	back, err := recsys.Load(blobOf(t, out[0]))
	if err != nil || back.Name() != "febr" {
		t.Fatalf("persisted blob: %v %v", back, err)
	}
	scores := make([]float64, len(snap.ItemIDs))
	m.Score([]uint32{1, 2, 3}, scores)
	if scores[1] == scores[25] && scores[2] == scores[26] {
		t.Fatalf("flat scores %v", scores)
	}

	// Trained after slim, febr takes slim's choice and weights instead of
	// searching the fsSLIM grid again: the same model, byte for byte.
	both, err := trainModels(context.Background(), snap, []string{"slim", "febr"}, opts, func(string, float64) {})
	if err != nil {
		t.Fatal(err)
	}
	if string(blobOf(t, both[1])) != string(blobOf(t, out[0])) {
		t.Fatalf("febr after slim: %v, alone: %v", both[1].served.Info.Params, info.Params)
	}
	if p := both[0].served.Info.Params; p["k"] != info.Params["k"] || p["l1"] != info.Params["l1"] || p["l2"] != info.Params["l2"] {
		t.Fatalf("slim chose %v, febr %v", p, info.Params)
	}
}

// Trained after the neighbourhood model that ranks as its aggsum
// predictor, a FEBR variant takes that model's k instead of comparing the
// baselines of every k again: the same choice, so the same model byte for
// byte as when it is trained alone.
func TestTrainModels_febrTakesTheBaselinesK(t *testing.T) {
	snap := clusteredSnapshot(t, 2, 60, 12, 10)
	opts := DefaultTrainOptions
	opts.Grid = []int{2, 5, 10, 20}
	for variant, base := range map[string]string{"febr-i-cosine": "itemknn", "febr-u-cosine": "userknn", "febr-i-kunn": "kunn-i", "febr-u-kunn": "kunn-u"} {
		alone, err := trainModels(context.Background(), snap, []string{variant}, opts, func(string, float64) {})
		if err != nil {
			t.Fatal(err)
		}
		both, err := trainModels(context.Background(), snap, []string{base, variant}, opts, func(string, float64) {})
		if err != nil {
			t.Fatal(err)
		}
		if string(blobOf(t, both[1])) != string(blobOf(t, alone[0])) {
			t.Fatalf("%s after %s: %v, alone: %v", variant, base, both[1].served.Info.Params, alone[0].served.Info.Params)
		}
		if bk, vk := both[0].served.Info.Params["k"], both[1].served.Info.Params["k"]; bk != vk && !slices.Contains(both[1].served.Info.GridExtended, fmt.Sprintf("k=%g", vk)) {
			t.Fatalf("%s chose k=%g, %s k=%g", base, bk, variant, vk)
		}
	}
}

// clusteredSnapshot stores users users of perUser views each, user u mostly
// within the block of block items of cluster u mod 3 (a fifth at random
// over all 3·block items), and returns the store's snapshot.
func clusteredSnapshot(t *testing.T, seed uint64, users, perUser, block int) *api.Snapshot {
	t.Helper()
	st := mustStore(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	var evs []api.Interaction
	for u := range users {
		c := u % 3
		for range perUser {
			i := block*c + rng.IntN(block)
			if rng.Float64() < 0.2 {
				i = rng.IntN(3 * block)
			}
			evs = append(evs, api.Interaction{UserID: fmt.Sprint("u", u), ItemID: fmt.Sprint("i", i), Type: "view"})
		}
	}
	if _, err := st.AddInteractions(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// blobOf is what publish persists of tr: its served model encoded.
func blobOf(t *testing.T, tr trained) []byte {
	t.Helper()
	b, err := tr.served.Model.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
