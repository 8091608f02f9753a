// Package eval is the offline evaluation harness of docs/design.md#evaluation: the hold-out
// protocols of dissertation §4.7.4–4.7.5, the two-level hyper-parameter
// search of §4.7.3, test-set measures with their standard errors over folds,
// a Table 4.3-style text table and the --dump files of docs/design.md#evaluation.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
package eval

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/recsys-engine/recsys/recsys"
)

// Dataset is a set of distinct positive pairs with dense indices and the
// original string ids: pair k is (Users[k], Items[k]).
type Dataset struct {
	Name             string
	UserIDs, ItemIDs []string
	Users, Items     []uint32
	// Times, when the data set has timestamps, holds the Unix time of
	// pair k (the time it became positive); the Time protocol needs it.
	Times []int64
	// Days, when Times is nil, holds the day number of pair k (the day it
	// became positive, recsys.DayOfUnix), which the time-aware models read
	// from the training matrix; with Times, the days are Times' days.
	Days []int32
}

// days is the day number of every pair: Days, or the days of Times; nil
// when the data set has neither.
func (d *Dataset) days() []int32 {
	if len(d.Times) == len(d.Users) && d.Times != nil {
		out := make([]int32, len(d.Times))
		for k, t := range d.Times {
			out[k] = recsys.DayOfUnix(t)
		}
		return out
	}
	if len(d.Days) == len(d.Users) {
		return d.Days
	}
	return nil
}

// timeTrain gives s.Train the day of each of its pairs, when the data set
// has them: the time-aware models read them (recsys.NewTimedMatrix).
func (d *Dataset) timeTrain(s *Split) (*Split, error) {
	days := d.days()
	if days == nil {
		return s, nil
	}
	nu, ni := d.shape()
	pairs := make([]recsys.Pair, len(d.Users))
	for k := range pairs {
		pairs[k] = recsys.Pair{User: d.Users[k], Item: d.Items[k]}
	}
	full, err := recsys.NewTimedMatrix(nu, ni, pairs, days)
	if err != nil {
		return nil, err
	}
	if s.Train, err = s.Train.WithDaysOf(full); err != nil {
		return nil, err
	}
	return s, nil
}

// Protocols of the evaluation.
const (
	// Standard holds out items drawn uniformly from O⁺u (§4.7.4).
	Standard = "standard"
	// Novelty draws them from O⁺u minus the 100 most popular items (§4.7.5).
	Novelty = "novelty"
	// Users is strong generalisation: a share of the users is held out of
	// training entirely; each held-out user's items are split 80/20 into
	// a live history the model scores from and the items ranked
	// (NewSplit).
	Users = "users"
	// Time holds out each user's latest 20% of positives by timestamp as
	// test and the 10% before as validation (NewSplit).
	Time = "time"
)

// Protocols lists the protocols of the evaluation.
var Protocols = []string{Standard, Novelty, Users, Time}

// Shares of the users protocol: each fold tests a disjoint block of
// UsersTestShare of the eligible users and validates on UsersValidationShare
// of the others; each held-out user has FoldInShare of its positives
// ranked, the rest given as its live history.
const (
	UsersTestShare       = 0.2
	UsersValidationShare = 0.1
	FoldInShare          = 0.2
)

// MaxFolds is the largest number of folds a protocol supports: the users
// protocol tests disjoint blocks of UsersTestShare of the users, and the
// time protocol has a single split (it depends on no seed); 0 means no
// limit.
func MaxFolds(protocol string) int {
	switch protocol {
	case Users:
		return int(1 / UsersTestShare)
	case Time:
		return 1
	}
	return 0
}

// Hold-out shares of §4.7.4 and the size of TopItems of §4.7.5.
const (
	ValidationShare = 0.1
	TestShare       = 0.2
	NoveltyTop      = 100
)

// DefaultMinPositives is the smallest |O⁺u| for which a user gets held-out
// items; users with fewer positives stay entirely in training.
const DefaultMinPositives = 5

// Split is one fold: the training matrix and, per user, the held-out
// validation and test items (sorted ascending; empty for users kept whole).
type Split struct {
	Train            *recsys.Matrix
	Validation, Test [][]uint32
	// Live, under the users protocol, holds the live history of every
	// held-out user (sorted; nil for the others, scored from their
	// training row): the user's training row is empty, and the model
	// scores it as a user it was not fitted on.
	Live [][]uint32
}

// History is the history user u is scored from: its live history under the
// users protocol, else its training row.
func (s *Split) History(u int) []uint32 {
	if s.Live != nil && s.Live[u] != nil {
		return s.Live[u]
	}
	return s.Train.Row(u)
}

// shape returns |U| and |I|: the id lists when given, else the largest
// index plus one.
func (d *Dataset) shape() (int, int) {
	nu, ni := len(d.UserIDs), len(d.ItemIDs)
	for k := range d.Users {
		nu = max(nu, int(d.Users[k])+1)
		ni = max(ni, int(d.Items[k])+1)
	}
	return nu, ni
}

// positives groups the pairs by user: O⁺u sorted and distinct.
func (d *Dataset) positives() ([][]uint32, error) {
	if len(d.Users) != len(d.Items) {
		return nil, fmt.Errorf("eval: %d users but %d items in the pair lists", len(d.Users), len(d.Items))
	}
	nu, _ := d.shape()
	pos := make([][]uint32, nu)
	for k, u := range d.Users {
		pos[u] = append(pos[u], d.Items[k])
	}
	for u := range pos {
		slices.Sort(pos[u])
		pos[u] = slices.Compact(pos[u])
	}
	return pos, nil
}

// topItems returns the NoveltyTop most popular items over the whole data
// set (ties broken by index), as a membership mask: TopItems of §4.7.5.
func topItems(pos [][]uint32, nItems int) []bool {
	count := make([]int, nItems)
	for _, items := range pos {
		for _, i := range items {
			count[i]++
		}
	}
	order := make([]int, nItems)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	top := make([]bool, nItems)
	for _, i := range order[:min(NoveltyTop, nItems)] {
		top[i] = true
	}
	return top
}

// holdOutSizes returns the validation and test sizes for a user with n
// positives: round(0.1·n) and round(0.2·n), each at least 1 (so users with
// 5 to 7 positives hold out one item in each set), for n ≥ minPositives;
// none below.
func holdOutSizes(n, minPositives int) (nVal, nTest int) {
	if n < minPositives {
		return 0, 0
	}
	nVal = max(1, int(math.Round(ValidationShare*float64(n))))
	nTest = max(1, int(math.Round(TestShare*float64(n))))
	return nVal, nTest
}

// NewSplit draws fold number fold of the protocol with the given seed: per
// user, a uniform sample of the candidates (O⁺u, or O⁺u \ TopItems under
// the novelty protocol) goes to test and validation, the rest of O⁺u to
// training (§4.7.4). Sizes come from holdOutSizes(|O⁺u|); under the novelty
// protocol they are capped by the number of candidates, test first, and a
// user with no candidate keeps all items in training. The same seed and
// fold give the same split. When the data set has times, the training
// matrix carries the day of each pair (Dataset.Days).
func NewSplit(d *Dataset, protocol string, seed int64, fold, minPositives int) (*Split, error) {
	if !slices.Contains(Protocols, protocol) {
		return nil, fmt.Errorf("eval: unknown protocol %q (want %s)", protocol, strings.Join(Protocols, ", "))
	}
	var (
		s   *Split
		err error
	)
	switch protocol {
	case Users:
		s, err = newUsersSplit(d, seed, fold, minPositives)
	case Time:
		s, err = newTimeSplit(d, minPositives)
	default:
		s, err = newItemSplit(d, protocol, seed, fold, minPositives)
	}
	if err != nil {
		return nil, err
	}
	return d.timeTrain(s)
}

// newItemSplit is NewSplit's split of the standard and novelty protocols.
func newItemSplit(d *Dataset, protocol string, seed int64, fold, minPositives int) (*Split, error) {
	pos, err := d.positives()
	if err != nil {
		return nil, err
	}
	nu, ni := d.shape()
	var top []bool
	if protocol == Novelty {
		top = topItems(pos, ni)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(fold)))
	s := &Split{Validation: make([][]uint32, nu), Test: make([][]uint32, nu)}
	train := make([]recsys.Pair, 0, len(d.Users))
	var cand, rest []uint32
	for u, items := range pos {
		cand, rest = cand[:0], rest[:0]
		for _, i := range items {
			if top != nil && top[i] {
				rest = append(rest, i)
			} else {
				cand = append(cand, i)
			}
		}
		nVal, nTest := holdOutSizes(len(items), minPositives)
		nTest = min(nTest, len(cand))
		nVal = min(nVal, len(cand)-nTest)
		// Partial Fisher–Yates: a uniform sample of nTest+nVal candidates.
		for k := 0; k < nTest+nVal; k++ {
			j := k + rng.IntN(len(cand)-k)
			cand[k], cand[j] = cand[j], cand[k]
		}
		s.Test[u] = slices.Sorted(slices.Values(cand[:nTest]))
		s.Validation[u] = slices.Sorted(slices.Values(cand[nTest : nTest+nVal]))
		for _, i := range cand[nTest+nVal:] {
			train = append(train, recsys.Pair{User: uint32(u), Item: i})
		}
		for _, i := range rest {
			train = append(train, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	s.Train, err = recsys.NewMatrix(nu, ni, train)
	if err != nil {
		return nil, err
	}
	return s, nil
}
