// Package synth draws synthetic interaction data for the tests and
// benchmarks of recsys and its subpackages (it imports none of them, so
// the tests inside package recsys can use it too).
package synth

import "math/rand/v2"

// Clustered draws perUser interactions for each of m users over n items,
// with popularity skew and eight taste clusters: 60% of a user's draws are
// items of its cluster, skewed towards low indices, the rest any item,
// skewed the same way. It calls add for each draw in order (a pair may
// repeat); the same seed gives the same draws.
func Clustered(seed uint64, m, n, perUser int, add func(user, item uint32)) {
	rng := rand.New(rand.NewPCG(seed, 11))
	for u := range m {
		cluster := rng.IntN(8)
		for range perUser {
			var i int
			if rng.Float64() < 0.6 {
				i = (cluster + 8*int(float64(n/8)*rng.Float64()*rng.Float64())) % n
			} else {
				i = int(float64(n) * rng.Float64() * rng.Float64())
			}
			add(uint32(u), uint32(i))
		}
	}
}

// Zipf draws perUser distinct items for each of m users from a Zipf law
// (exponent 1.1) over n items in shuffled order: popularity, no taste. It
// calls add for each pair, users in order; the same seed gives the same
// pairs.
func Zipf(seed uint64, m, n, perUser int, add func(user, item uint32)) {
	rng := rand.New(rand.NewPCG(seed, 13))
	z := rand.NewZipf(rng, 1.1, 1, uint64(n-1))
	perm := rng.Perm(n)
	seen := map[int]bool{}
	for u := range m {
		clear(seen)
		for len(seen) < perUser {
			if i := perm[z.Uint64()]; !seen[i] {
				seen[i] = true
				add(uint32(u), uint32(i))
			}
		}
	}
}
