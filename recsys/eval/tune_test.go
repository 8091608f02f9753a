package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// TestSampleUsers: a sample at least as large as the validation users
// changes nothing; a smaller one keeps exactly n of the users with
// held-out items, with their items untouched, the same for the same seed
// and another for another seed; Tune validates every candidate on that
// sample, which a direct computation over the same users confirms.
func TestSampleUsers(t *testing.T) {
	split := genSplit(t, 200, 4)
	users := 0
	for _, v := range split.Validation {
		if len(v) > 0 {
			users++
		}
	}
	if users < 100 {
		t.Fatalf("%d validation users, want ≥ 100 for this test", users)
	}
	for _, n := range []int{0, -1, users, users + 1} {
		if got := SampleUsers(split.Validation, n, 7); !slices.EqualFunc(got, split.Validation, slices.Equal) {
			t.Errorf("n = %d: the sample differs from the whole", n)
		}
	}
	sample := SampleUsers(split.Validation, 10, 7)
	kept := 0
	for u, v := range sample {
		if len(v) == 0 {
			continue
		}
		kept++
		if !slices.Equal(v, split.Validation[u]) {
			t.Errorf("user %d: sampled items %v, want %v", u, v, split.Validation[u])
		}
	}
	if kept != 10 {
		t.Errorf("a sample of 10 kept %d users", kept)
	}
	if again := SampleUsers(split.Validation, 10, 7); !slices.EqualFunc(again, sample, slices.Equal) {
		t.Error("the same seed drew another sample")
	}
	if other := SampleUsers(split.Validation, 10, 8); slices.EqualFunc(other, sample, slices.Equal) {
		t.Error("seeds 7 and 8 drew the same sample of 10 among many users")
	}

	ctx := context.Background()
	cache := recsys.NewNeighbourCache(split.Train, 20)
	tuned, err := Tune(ctx, "itemknn", split, cache, Tuning{Grid: recsys.Grid{K: []int{20}}, ValidationUsers: 10, SampleSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recsys.New("itemknn")
	if err := m.Fit(ctx, split.Train, recsys.Params{K: 20}); err != nil {
		t.Fatal(err)
	}
	want, err := Evaluate(ctx, m, split.Train, sample)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Evaluate(ctx, m, split.Train, split.Validation)
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines add their partial sums in any order: compare to rounding.
	near := func(a, b metrics.Values) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-12 {
				return false
			}
		}
		return true
	}
	if !near(tuned.Validation, want) {
		t.Errorf("Tune with 10 validation users: %v, want the mean over the sample %v", tuned.Validation, want)
	}
	if near(want, all) {
		t.Error("a sample of 10 of many users gave the mean over all of them")
	}
	full, err := Tune(ctx, "itemknn", split, cache, Tuning{Grid: recsys.Grid{K: []int{20}}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(full.Validation, all) {
		t.Errorf("Tune with the default sample above the %d users: %v, want the mean over all %v", users, full.Validation, all)
	}
}

// genSplit is a standard split of n users × 100 items, 20 long-tailed
// positives each.
func genSplit(t *testing.T, n int, seed uint64) *Split {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	d := &Dataset{}
	for u := range n {
		d.UserIDs = append(d.UserIDs, fmt.Sprintf("u%d", u))
	}
	for i := range 100 {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%d", i))
	}
	for u := range n {
		seen := map[uint32]bool{}
		for len(seen) < 20 {
			seen[uint32(int(100*rng.Float64()*rng.Float64()))] = true
		}
		for i := range seen {
			d.Users, d.Items = append(d.Users, uint32(u)), append(d.Items, i)
		}
	}
	split, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	return split
}

// TestTuning_Halves: the two halves part the users with validation items
// between them, ⌈n/2⌉ to tune, with their items untouched; the same seed
// gives the same halves and another seed others; with one such user
// there is nothing to hold out.
func TestTuning_Halves(t *testing.T) {
	val := genSplit(t, 201, 4).Validation
	users := 0
	for _, v := range val {
		if len(v) > 0 {
			users++
		}
	}
	tune, sel := Tuning{SampleSeed: 3}.Halves(val)
	nt, ns := 0, 0
	for u := range val {
		switch {
		case len(tune[u]) > 0 && len(sel[u]) > 0:
			t.Fatalf("user %d is in both halves", u)
		case len(tune[u]) > 0:
			nt++
			if !slices.Equal(tune[u], val[u]) {
				t.Errorf("user %d: tuning items %v, want %v", u, tune[u], val[u])
			}
		case len(sel[u]) > 0:
			ns++
			if !slices.Equal(sel[u], val[u]) {
				t.Errorf("user %d: selection items %v, want %v", u, sel[u], val[u])
			}
		case len(val[u]) > 0:
			t.Errorf("user %d is in neither half", u)
		}
	}
	if nt != (users+1)/2 || ns != users/2 {
		t.Errorf("halves of %d and %d users, want %d and %d", nt, ns, (users+1)/2, users/2)
	}
	if again, _ := (Tuning{SampleSeed: 3}).Halves(val); !slices.EqualFunc(again, tune, slices.Equal) {
		t.Error("the same seed gave other halves")
	}
	if other, _ := (Tuning{SampleSeed: 4}).Halves(val); slices.EqualFunc(other, tune, slices.Equal) {
		t.Error("seeds 3 and 4 gave the same halves")
	}
	one := make([][]uint32, 5)
	one[2] = []uint32{7}
	if a, b := (Tuning{}).Halves(one); !slices.EqualFunc(a, one, slices.Equal) || !slices.EqualFunc(b, one, slices.Equal) {
		t.Errorf("one validation user: halves %v and %v, want both %v", a, b, one)
	}
}

// TestTune_nested: a nested search makes the choice a search on the
// tuning half alone makes, with its ADG as TuningADG, and measures that
// choice on the other half; without Nested the validation ADG is the
// search's own maximum. The test fails if the selection users leak into
// the search or the measure is taken on the tuning users.
func TestTune_nested(t *testing.T) {
	ctx := context.Background()
	split := genSplit(t, 300, 9)
	cache := recsys.NewNeighbourCache(split.Train, 100)
	tn := Tuning{Grid: recsys.Grid{K: []int{5, 10, 20, 50, 100}}, SampleSeed: 5, Extend: -1}
	nested := tn
	nested.Nested = true
	got, err := Tune(ctx, "itemknn", split, cache, nested)
	if err != nil {
		t.Fatal(err)
	}
	tuneVal, selVal := tn.Halves(split.Validation)
	half := *split
	half.Validation = tuneVal
	want, err := Tune(ctx, "itemknn", &half, cache, tn)
	if err != nil {
		t.Fatal(err)
	}
	if got.Params.K != want.Params.K || got.TuningADG != want.ValidationADG {
		t.Errorf("nested: k=%d, tuning ADG %v; the search on the tuning half: k=%d, ADG %v", got.Params.K, got.TuningADG, want.Params.K, want.ValidationADG)
	}
	m, _ := recsys.New("itemknn")
	if err := m.Fit(ctx, split.Train, recsys.Params{K: want.Params.K}); err != nil {
		t.Fatal(err)
	}
	onSel, err := Evaluate(ctx, m, split.Train, selVal)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.ValidationADG-onSel[metrics.MADG]) > 1e-12 || math.Abs(got.Validation[metrics.MADG]-onSel[metrics.MADG]) > 1e-12 {
		t.Errorf("nested validation ADG %v (values %v), want the chosen k's ADG on the selection half %v", got.ValidationADG, got.Validation[metrics.MADG], onSel[metrics.MADG])
	}
	if math.Abs(onSel[metrics.MADG]-want.ValidationADG) < 1e-9 {
		t.Error("the two halves gave the same ADG: the test cannot tell them apart")
	}
	if want.TuningADG != want.ValidationADG {
		t.Errorf("without Nested: tuning ADG %v, validation ADG %v, want equal", want.TuningADG, want.ValidationADG)
	}
}

// The users protocol's extra selection evidence holds out
// round(0.1·|O⁺u|) items (one at least) of every training user with
// enough positives, keeps the rest as the matrix, and pools a model's ADG
// on them with the selection users' by users: hand-counted on a user of
// 25 positives (3 held out) and one of 4 (1 held out, and 3 kept), and
// the pooled mean checked against the two means.
func TestTrainHoldout(t *testing.T) {
	var pairs []recsys.Pair
	for i := range 25 {
		pairs = append(pairs, recsys.Pair{User: 0, Item: uint32(i)})
	}
	for i := range 4 {
		pairs = append(pairs, recsys.Pair{User: 1, Item: uint32(30 + i)})
	}
	pairs = append(pairs, recsys.Pair{User: 2, Item: 40}) // one positive: none held out
	x, err := recsys.NewMatrix(3, 41, pairs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := newTrainHoldout(x, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range []int{3, 1, 0} {
		if got := len(h.heldOut[u]); got != want {
			t.Errorf("user %d: %d held out, want %d", u, got, want)
		}
		if got := len(h.rest.Row(u)) + len(h.heldOut[u]); got != len(x.Row(u)) {
			t.Errorf("user %d: %d kept and held out, want its %d", u, got, len(x.Row(u)))
		}
		for _, i := range h.heldOut[u] {
			if _, in := slices.BinarySearch(h.rest.Row(u), i); in {
				t.Errorf("user %d: item %d is both held out and kept", u, i)
			}
		}
	}
	if h.users != 2 {
		t.Errorf("%d users with held-out items, want 2", h.users)
	}
	ctx := context.Background()
	got, err := h.pooled(ctx, "popular", recsys.Params{}, 0.5, 6)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recsys.New("popular")
	if err := m.Fit(ctx, h.rest, recsys.Params{}); err != nil {
		t.Fatal(err)
	}
	v, err := Evaluate(ctx, m, h.rest, h.heldOut)
	if err != nil {
		t.Fatal(err)
	}
	if want := (2*v[metrics.MADG] + 6*0.5) / 8; math.Abs(got-want) > 1e-15 {
		t.Errorf("pooled ADG %v, want (2·%v + 6·0.5)/8 = %v", got, v[metrics.MADG], want)
	}
}
