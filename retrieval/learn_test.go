package retrieval

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
	"github.com/recsys-engine/recsys/retrieval/rank"
)

// coldStart builds items whose collaborative similarity is decided by three
// latent factors stored in the first three features; seven noisy features
// follow. Warm items (the first nWarm) get collaborative neighbour lists:
// their k nearest warm items in the latent space.
func coldStart(n, nWarm, k int, seed uint64) (x [][]float64, lists [][]int, truth func(q []float64, k int) []int) {
	rng := rand.New(rand.NewPCG(seed, 5))
	latent := make([][]float64, n)
	for i := range latent {
		latent[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		row := slices.Clone(latent[i])
		for j := 0; j < 7; j++ {
			row = append(row, 2*rng.NormFloat64())
		}
		x = append(x, row)
	}
	truth = func(q []float64, k int) []int {
		var nb []Neighbour
		for i := 0; i < nWarm; i++ {
			nb = append(nb, Neighbour{i, SqDist(q[:3], latent[i])})
		}
		slices.SortFunc(nb, func(a, b Neighbour) int {
			if a.Distance < b.Distance {
				return -1
			}
			return 1
		})
		var ids []int
		for _, v := range nb {
			if len(ids) == k {
				break
			}
			if v.Distance > 0 { // not the item itself
				ids = append(ids, v.ID)
			}
		}
		return ids
	}
	for i := 0; i < nWarm; i++ {
		lists = append(lists, truth(x[i], k))
	}
	return x, lists, truth
}

// TestLearn_fromNeighbours_coldStart: a content metric learned from
// collaborative neighbour lists finds the collaborative neighbours of
// unseen (cold) items far better than Euclidean distance on the features.
func TestLearn_fromNeighbours_coldStart(t *testing.T) {
	const n, nWarm, k = 260, 200, 10
	x, lists, truth := coldStart(n, nWarm, k, 1)
	sup, err := FromNeighbours(lists)
	if err != nil {
		t.Fatal(err)
	}
	recall := func(met *Metric) float64 {
		proj, err := met.ProjectAll(x[:nWarm])
		if err != nil {
			t.Fatal(err)
		}
		ix, err := BuildIndex(proj)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		for c := nWarm; c < n; c++ {
			q, err := met.Project(x[c])
			if err != nil {
				t.Fatal(err)
			}
			want := truth(x[c], k)
			for _, nb := range ix.Search(q, k, nil) {
				if slices.Contains(want, nb.ID) {
					hits++
				}
			}
		}
		return float64(hits) / float64((n-nWarm)*k)
	}
	ctx := context.Background()
	euc, err := Learn(ctx, x[:nWarm], sup, LearnOptions{Method: MethodEuclidean})
	if err != nil {
		t.Fatal(err)
	}
	iters, rounds := 20000, 30
	if raceEnabled {
		iters, rounds = 8000, 15
	}
	for _, method := range []string{MethodFRML, MethodMLRAUC} {
		met, err := Learn(ctx, x[:nWarm], sup, LearnOptions{Method: method, Params: Params{Rank: 5, C: 100}, Iterations: iters, Segment: 2000, MaxRounds: rounds, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		re, rl := recall(euc), recall(met)
		t.Logf("%s: cold-start recall@%d euclidean %.3f, learned %.3f", method, k, re, rl)
		if rl < re+0.15 {
			t.Errorf("%s: recall %.3f not 0.15 above Euclidean %.3f", method, rl, re)
		}
		// The learned metric survives a round trip.
		_, back := blobtest.RoundTrip[Metric](t, met)
		if got := recall(back); got != rl {
			t.Errorf("recall after round trip %.3f, want %.3f", got, rl)
		}
	}
}

func TestLearn_badInput(t *testing.T) {
	ctx := context.Background()
	sup, _ := FromLabels([]int{0, 1})
	if _, err := Learn(ctx, [][]float64{{1}, {2}, {3}}, sup, LearnOptions{}); err == nil {
		t.Error("accepted supervision of the wrong size")
	}
	if _, err := Learn(ctx, [][]float64{{1}, {2}}, sup, LearnOptions{Method: "nope"}); err == nil {
		t.Error("accepted an unknown method")
	}
	if _, err := FromNeighbours([][]int{{1}, {5}}); err == nil {
		t.Error("accepted an out-of-range neighbour")
	}
	// Cancellation is honoured.
	ds := synthetic(60, 3, 1)
	sup, _ = FromLabels(ds.Labels)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, m := range []string{MethodFRML, MethodMLRMAP, MethodRMLR} {
		if _, err := Learn(cctx, ds.X, sup, LearnOptions{Method: m}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", m, err)
		}
	}
}

// TestLearn_deterministic: the same seed gives the same metric.
func TestLearn_deterministic(t *testing.T) {
	ds := synthetic(60, 3, 4)
	sup, _ := FromLabels(ds.Labels)
	for _, m := range []string{MethodFRML, MethodMLRMAP} {
		opt := LearnOptions{Method: m, Iterations: 2000, Segment: 500, MaxRounds: 10, Seed: 9}
		a, err := Learn(context.Background(), ds.X, sup, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Learn(context.Background(), ds.X, sup, opt)
		if err != nil {
			t.Fatal(err)
		}
		ab, _ := a.MarshalBinary()
		bb, _ := b.MarshalBinary()
		if !slices.Equal(ab, bb) {
			t.Errorf("%s: two runs with one seed differ", m)
		}
	}
}

// TestAPByCounting matches rank.AveragePrecision on the sorted ranking.
func TestAPByCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 50; trial++ {
		n := 5 + rng.IntN(60)
		lists := make([][]int, n)
		for q := range lists {
			for i := 0; i < n; i++ {
				if i != q && rng.IntN(4) == 0 {
					lists[q] = append(lists[q], i)
				}
			}
		}
		sup, _ := FromNeighbours(lists)
		dist := make([]float64, n)
		for i := range dist {
			dist[i] = rng.Float64()
		}
		q := rng.IntN(n)
		var rel []bool
		for _, i := range rank.ByDistance(dist, q) {
			rel = append(rel, sup.IsRelevant(q, i))
		}
		want := rank.AveragePrecision(rel)
		if got := apByCounting(dist, q, sup); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}
