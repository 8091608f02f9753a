package recsys

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkRanker_Ranks ranks 14 held-out items of a user with 143
// training items among 27,000 (the MovieLens-20M shape), scores drawn at
// random: the validation step every grid point repeats for every user.
//
//	go test -run '^$' -bench Ranker_Ranks ./recsys
func BenchmarkRanker_Ranks(b *testing.B) {
	const n = 27_000
	rng := rand.New(rand.NewPCG(1, 2))
	pop := make([]uint32, n)
	scores := make([]float64, n)
	for i := range n {
		pop[i] = uint32(rng.IntN(1000))
		scores[i] = float64(rng.IntN(50)) / 7
	}
	perm := rng.Perm(n)
	var exclude, relevant []uint32
	for _, i := range perm[:143] {
		exclude = append(exclude, uint32(i))
	}
	for _, i := range perm[143 : 143+14] {
		relevant = append(relevant, uint32(i))
	}
	slices.Sort(exclude)
	rk := NewRanker(pop, n)
	for b.Loop() {
		rk.Ranks(scores, exclude, relevant)
	}
}
