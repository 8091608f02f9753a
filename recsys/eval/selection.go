package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// trainHoldout is the extra selection evidence of the users protocol:
// a share of every training user's positives held out of the training
// matrix. The protocol validates on a tenth of the users it does not test
// (75 on MovieLens 100K, 37 in Tuning.Nested's selection half), too few
// to tell candidates 0.01 apart: one fold's selection users put wrmf 0.013
// above febr-blend where its test users put the blend 0.014 above wrmf
// (docs/evaluation.md "Auto mode picks the winner"). Each candidate's
// chosen setting is refitted on the rest and scored on the held-out
// items, and its selection ADG is the mean over both sets of users, as
// a training job's validation split holds out items of every user.
type trainHoldout struct {
	rest    *recsys.Matrix
	heldOut [][]uint32
	users   int
}

// SelectionHoldoutShare is the share of a training user's positives
// trainHoldout holds out: the standard protocol's validation share.
const SelectionHoldoutShare = ValidationShare

// newTrainHoldout holds out round(share·|O⁺u|) of the positives of every
// training user with at least minPositives (at least one), drawn by a
// generator seeded with seed.
func newTrainHoldout(train *recsys.Matrix, minPositives int, seed uint64) (*trainHoldout, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5e1ec7))
	h := &trainHoldout{heldOut: make([][]uint32, train.Users())}
	var rest []recsys.Pair
	var items []uint32
	for u := range train.Users() {
		items = append(items[:0], train.Row(u)...)
		n := 0
		if len(items) >= max(2, minPositives) {
			n = max(1, int(math.Round(SelectionHoldoutShare*float64(len(items)))))
			rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
			h.heldOut[u] = slices.Sorted(slices.Values(items[:n]))
			h.users++
		}
		for _, i := range items[n:] {
			rest = append(rest, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	var err error
	if h.rest, err = recsys.NewMatrix(train.Users(), train.Items(), rest); err != nil {
		return nil, err
	}
	return h, nil
}

// pooled is the selection ADG of a model named name chosen with the
// setting refit (Tuned.Refit): its ADG on the held-out items of the
// training users, refitted on the rest, pooled by users with sel, its
// ADG over selUsers selection users.
func (h *trainHoldout) pooled(ctx context.Context, name string, refit recsys.Params, sel float64, selUsers int) (float64, error) {
	m, err := recsys.New(name)
	if err != nil {
		return 0, err
	}
	refit.Cache, refit.Init = nil, nil
	if err := m.Fit(ctx, h.rest, refit); err != nil {
		return 0, fmt.Errorf("eval: fit %s for selection: %w", name, err)
	}
	v, err := Evaluate(ctx, m, h.rest, h.heldOut)
	if err != nil {
		return 0, err
	}
	return (v[metrics.MADG]*float64(h.users) + sel*float64(selUsers)) / float64(h.users+selUsers), nil
}

// usersWith counts the users with held-out items.
func usersWith(sets [][]uint32) int {
	n := 0
	for _, s := range sets {
		if len(s) > 0 {
			n++
		}
	}
	return n
}
