package febr

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// holdout is a training matrix with a share of every user's positives
// held out: the features OPT-ADG learns from are then computed without the
// pairs it ranks, as the features of validation, test and future items are
// (Options.Holdout).
type holdout struct {
	x     *recsys.Matrix // the rest, the histories
	pos   [][]uint32     // held out per user, sorted
	cache *recsys.NeighbourCache
}

// newHoldout holds out round(share·|O⁺u|) uniformly drawn items of
// every user with at least two positives, keeping one at least; of those
// in users alone when users (ascending) is not nil. cache, when not nil,
// is made for the rest with the given k_max.
func newHoldout(x *recsys.Matrix, share float64, seed uint64, kmax []int, users []int) (*holdout, error) {
	rng := rand.New(rand.NewPCG(seed, 0x401d))
	ho := &holdout{pos: make([][]uint32, x.Users())}
	var rest []recsys.Pair
	var items []uint32
	for u := range x.Users() {
		items = append(items[:0], x.Row(u)...)
		n := len(items)
		h := 0
		if _, in := slices.BinarySearch(users, u); n >= 2 && (users == nil || in) {
			h = min(n-1, max(1, int(math.Round(share*float64(n)))))
		}
		for k := 0; k < h; k++ {
			j := k + rng.IntN(n-k)
			items[k], items[j] = items[j], items[k]
		}
		ho.pos[u] = slices.Sorted(slices.Values(items[:h]))
		for _, i := range items[h:] {
			rest = append(rest, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	var err error
	if ho.x, err = recsys.NewMatrix(x.Users(), x.Items(), rest); err != nil {
		return nil, err
	}
	if len(kmax) > 0 {
		ho.cache = recsys.NewNeighbourCache(ho.x, slices.Max(kmax))
	}
	return ho, nil
}
