package eval

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// usersStream is the PCG stream of the users protocol's partition of the
// users, shared by every fold so that their test blocks are disjoint.
const usersStream = 0x75736572

// newUsersSplit is fold number fold of the users protocol (the strong
// generalisation of Liang et al. 2018). The users with at least minPositives positives are
// shuffled once by seed; fold f tests block f of that order, the
// max(1, round(UsersTestShare·n)) users from position f·size, so the folds'
// test users are disjoint, and validates on max(1,
// round(UsersValidationShare·n)) users drawn uniformly from the others by
// the stream (seed, f). Those held-out users have no training row: a
// uniform sample of max(1, round(FoldInShare·|O⁺u|)) of their positives is
// ranked (Test or Validation), the rest is their live history (Live). Every
// other user is kept whole in training.
func newUsersSplit(d *Dataset, seed int64, fold, minPositives int) (*Split, error) {
	pos, err := d.positives()
	if err != nil {
		return nil, err
	}
	nu, ni := d.shape()
	var eligible []uint32
	for u, items := range pos {
		if len(items) >= minPositives {
			eligible = append(eligible, uint32(u))
		}
	}
	n := len(eligible)
	nTest := max(1, int(math.Round(UsersTestShare*float64(n))))
	nVal := max(1, int(math.Round(UsersValidationShare*float64(n))))
	if fold < 0 || (fold+1)*nTest > n || n-nTest < nVal || nu-nTest-nVal < 1 {
		return nil, fmt.Errorf("eval: the users protocol cannot draw fold %d: %d users have at least %d positives, and each fold holds out %d for test and %d for validation (at most %d folds)",
			fold+1, n, minPositives, nTest, nVal, MaxFolds(Users))
	}
	part := rand.New(rand.NewPCG(uint64(seed), usersStream))
	part.Shuffle(n, func(a, b int) { eligible[a], eligible[b] = eligible[b], eligible[a] })
	test := eligible[fold*nTest : (fold+1)*nTest]
	others := slices.Concat(eligible[:fold*nTest], eligible[(fold+1)*nTest:])
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(fold)))
	for k := range nVal {
		j := k + rng.IntN(len(others)-k)
		others[k], others[j] = others[j], others[k]
	}
	role := make([]int8, nu) // 1 test, 2 validation
	for _, u := range test {
		role[u] = 1
	}
	for _, u := range others[:nVal] {
		role[u] = 2
	}
	s := &Split{Validation: make([][]uint32, nu), Test: make([][]uint32, nu), Live: make([][]uint32, nu)}
	train := make([]recsys.Pair, 0, len(d.Users))
	for u, items := range pos {
		if role[u] == 0 {
			for _, i := range items {
				train = append(train, recsys.Pair{User: uint32(u), Item: i})
			}
			continue
		}
		cand := slices.Clone(items)
		nHeld := max(1, int(math.Round(FoldInShare*float64(len(cand)))))
		for k := range nHeld {
			j := k + rng.IntN(len(cand)-k)
			cand[k], cand[j] = cand[j], cand[k]
		}
		held := slices.Sorted(slices.Values(cand[:nHeld]))
		s.Live[u] = slices.Sorted(slices.Values(cand[nHeld:]))
		if role[u] == 1 {
			s.Test[u] = held
		} else {
			s.Validation[u] = held
		}
	}
	s.Train, err = recsys.NewMatrix(nu, ni, train)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// timed is a positive with the time it became positive.
type timed struct {
	item uint32
	at   int64
}

// newTimeSplit is the time protocol's only split: per user with at least
// minPositives positives, the latest holdOutSizes test items by the time
// each pair became positive (its earliest event) go to test and the
// validation-size ones before them to validation, the rest to training;
// equal times are ordered by item index. It depends on no seed.
func newTimeSplit(d *Dataset, minPositives int) (*Split, error) {
	if len(d.Users) != len(d.Items) {
		return nil, fmt.Errorf("eval: %d users but %d items in the pair lists", len(d.Users), len(d.Items))
	}
	if len(d.Times) != len(d.Users) {
		return nil, fmt.Errorf("eval: the time protocol needs a timestamp for every positive, and data set %q has none", d.Name)
	}
	nu, ni := d.shape()
	byUser := make([][]timed, nu)
	for k, u := range d.Users {
		byUser[u] = append(byUser[u], timed{d.Items[k], d.Times[k]})
	}
	s := &Split{Validation: make([][]uint32, nu), Test: make([][]uint32, nu)}
	train := make([]recsys.Pair, 0, len(d.Users))
	for u, evs := range byUser {
		// A pair listed twice keeps its earliest time.
		slices.SortFunc(evs, func(a, b timed) int {
			return cmp.Or(cmp.Compare(a.item, b.item), cmp.Compare(a.at, b.at))
		})
		evs = slices.CompactFunc(evs, func(a, b timed) bool { return a.item == b.item })
		slices.SortFunc(evs, func(a, b timed) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.item, b.item))
		})
		nVal, nTest := holdOutSizes(len(evs), minPositives)
		cut := len(evs) - nTest - nVal
		items := func(es []timed) []uint32 {
			var out []uint32
			for _, e := range es {
				out = append(out, e.item)
			}
			return slices.Sorted(slices.Values(out))
		}
		s.Test[u] = items(evs[cut+nVal:])
		s.Validation[u] = items(evs[cut : cut+nVal])
		for _, e := range evs[:cut] {
			train = append(train, recsys.Pair{User: uint32(u), Item: e.item})
		}
	}
	var err error
	s.Train, err = recsys.NewMatrix(nu, ni, train)
	if err != nil {
		return nil, err
	}
	return s, nil
}
