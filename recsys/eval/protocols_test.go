package eval

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// The time split of a hand-built data set: user 0 has ten positives at
// distinct times listed out of order, so test is the latest two (round(0.2
// · 10)) and validation the one before; user 1 has five positives, two at
// the same time (ordered by item index) and one pair listed twice (its
// earliest time counts); user 2 has four positives (< 5) and stays whole.
func TestNewSplit_timeByHand(t *testing.T) {
	d := &Dataset{Name: "hand"}
	add := func(u, i uint32, at int64) {
		d.Users, d.Items, d.Times = append(d.Users, u), append(d.Items, i), append(d.Times, at)
	}
	// user 0: item i at time 100·(10−i), so item 0 is the latest.
	for i := uint32(0); i < 10; i++ {
		add(0, i, int64(100*(10-i)))
	}
	// user 1: items 3 and 4 both at time 50, item 2 at 10 and again at 90.
	add(1, 0, 1)
	add(1, 1, 2)
	add(1, 4, 50)
	add(1, 3, 50)
	add(1, 2, 90)
	add(1, 2, 10)
	for i := uint32(5); i < 9; i++ {
		add(2, i, int64(i))
	}
	s, err := NewSplit(d, Time, 99, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ test, val, train []uint32 }{
		{test: []uint32{0, 1}, val: []uint32{2}, train: []uint32{3, 4, 5, 6, 7, 8, 9}},
		// time order 0 (1), 1 (2), 2 (10), 3 (50), 4 (50): test 4, validation 3.
		{test: []uint32{4}, val: []uint32{3}, train: []uint32{0, 1, 2}},
		{train: []uint32{5, 6, 7, 8}},
	}
	for u, w := range want {
		if !slices.Equal(s.Test[u], w.test) || !slices.Equal(s.Validation[u], w.val) || !slices.Equal(s.Train.Row(u), w.train) {
			t.Errorf("user %d: test %v validation %v train %v; want %v %v %v", u, s.Test[u], s.Validation[u], s.Train.Row(u), w.test, w.val, w.train)
		}
	}
	// The split depends on no seed.
	s2, err := NewSplit(d, Time, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	for u := range want {
		if !slices.Equal(s.Test[u], s2.Test[u]) || !slices.Equal(s.Validation[u], s2.Validation[u]) {
			t.Errorf("user %d: the time split changed with the seed", u)
		}
	}
	d.Times = nil
	if _, err := NewSplit(d, Time, 1, 0, DefaultMinPositives); err == nil || !strings.Contains(err.Error(), "timestamp") {
		t.Errorf("a data set without times: %v", err)
	}
}

// The users split: test users are disjoint blocks of 20% of the eligible
// users across folds, validation users 10% of the others; a held-out user
// has no training row and its positives are split into live history and
// round(0.2·n) ranked items; every other user is whole in training.
func TestNewSplit_usersIdentities(t *testing.T) {
	d := clustered(11, 200, 120, 4, 20)
	// Users 0–9 keep only 3 positives, below DefaultMinPositives.
	var keep []int
	count := map[uint32]int{}
	for k, u := range d.Users {
		if u < 10 {
			if count[u]++; count[u] > 3 {
				continue
			}
		}
		keep = append(keep, k)
	}
	d.Users = pick(d.Users, keep)
	d.Items = pick(d.Items, keep)
	pos, _ := d.positives()
	eligible := 190
	nTest, nVal := 38, 19 // round(0.2·190), round(0.1·190)
	seenTest := map[int]int{}
	for fold := range 5 {
		s, err := NewSplit(d, Users, 7, fold, DefaultMinPositives)
		if err != nil {
			t.Fatal(err)
		}
		var tests, vals int
		for u, items := range pos {
			held := s.Test[u]
			if len(s.Validation[u]) > 0 {
				held = s.Validation[u]
			}
			if len(s.Test[u]) > 0 && len(s.Validation[u]) > 0 {
				t.Fatalf("fold %d: user %d is both test and validation", fold, u)
			}
			if len(held) == 0 {
				if s.Live[u] != nil || !slices.Equal(s.Train.Row(u), items) {
					t.Fatalf("fold %d: user %d is not held out but is not whole in training", fold, u)
				}
				continue
			}
			if u < 10 {
				t.Fatalf("fold %d: user %d with 3 positives held out", fold, u)
			}
			if s.Train.UserCount(u) != 0 {
				t.Fatalf("fold %d: held-out user %d has %d training items", fold, u, s.Train.UserCount(u))
			}
			if want := max(1, int(math.Round(0.2*float64(len(items))))); len(held) != want {
				t.Fatalf("fold %d: user %d with %d positives has %d ranked items, want %d", fold, u, len(items), len(held), want)
			}
			if got := slices.Sorted(slices.Values(slices.Concat(held, s.Live[u]))); !slices.Equal(got, items) {
				t.Fatalf("fold %d: user %d: live %v and ranked %v are not a partition of %v", fold, u, s.Live[u], held, items)
			}
			if !slices.Equal(s.History(u), s.Live[u]) {
				t.Fatalf("fold %d: History(%d) is not its live history", fold, u)
			}
			if len(s.Test[u]) > 0 {
				tests++
				if f, dup := seenTest[u]; dup {
					t.Fatalf("user %d tested in folds %d and %d", u, f, fold)
				}
				seenTest[u] = fold
			} else {
				vals++
			}
		}
		if tests != nTest || vals != nVal {
			t.Errorf("fold %d: %d test and %d validation users, want %d and %d", fold, tests, vals, nTest, nVal)
		}
		again, _ := NewSplit(d, Users, 7, fold, DefaultMinPositives)
		for u := range pos {
			if !slices.Equal(again.Test[u], s.Test[u]) || !slices.Equal(again.Live[u], s.Live[u]) {
				t.Fatalf("fold %d: the same seed drew another split for user %d", fold, u)
			}
		}
	}
	if len(seenTest) != 5*nTest || len(seenTest) > eligible {
		t.Errorf("%d users tested over 5 folds, want %d", len(seenTest), 5*nTest)
	}
	if _, err := NewSplit(d, Users, 7, 5, DefaultMinPositives); err == nil {
		t.Error("a sixth fold of the users protocol was drawn")
	}
}

func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = xs[i]
	}
	return out
}

// A held-out user is ranked from its live history: with popular, the rank
// of a test item is the number of items not in the live history that are
// more popular in training (ties by index, as popularity breaks them), and
// n excludes the live items, by hand.
func TestRankHeldOutLive_byHand(t *testing.T) {
	// Training: users 0–2; item popularity 0:3, 1:2, 2:1, 3:0, 4:0.
	train, err := recsys.NewMatrix(4, 5, []recsys.Pair{{User: 0, Item: 0}, {User: 0, Item: 1}, {User: 0, Item: 2}, {User: 1, Item: 0}, {User: 1, Item: 1}, {User: 2, Item: 0}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recsys.New("popular")
	if err := m.Fit(context.Background(), train, recsys.Params{}); err != nil {
		t.Fatal(err)
	}
	// User 3 is held out: live history {0}, test items {2, 4}. Among the
	// items 1, 2, 3, 4 by popularity (ties by index): 1, 2, 3, 4, so item
	// 2 has rank 1 and item 4 rank 3.
	live := [][]uint32{nil, nil, nil, {0}}
	test := [][]uint32{nil, nil, nil, {2, 4}}
	ranks, _, err := recsys.RankHeldOutLive(context.Background(), m, train, live, train.Popularity(), [][][]uint32{test}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ranks[0][3], []int{1, 3}) {
		t.Fatalf("ranks %v, want [1 3]", ranks[0][3])
	}
	got, users := meanValues(ranks[0], train, live)
	if want := metrics.All([]int{1, 3}, 4); users != 1 || got != want {
		t.Errorf("meanValues = %v over %d users, want %v (n = 5 − 1 live item)", got, users, want)
	}
	// Without the live history the user has no history: item 0 competes.
	plain, _, err := recsys.RankHeldOut(context.Background(), m, train, train.Popularity(), [][][]uint32{test}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(plain[0][3], ranks[0][3]) {
		t.Error("RankHeldOut and RankHeldOutLive agree: the live history was not used")
	}
}

// Under the users protocol, Tune validates every candidate from the
// validation users' live histories: the chosen model's validation
// measures are Evaluate's with those histories, and the refit matrix is
// the split's (FEBR aside).
func TestTune_usersProtocolValidatesLive(t *testing.T) {
	d := clustered(5, 150, 90, 3, 16)
	s, err := NewSplit(d, Users, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	cache := recsys.NewNeighbourCache(s.Train, 50)
	tuned, err := Tune(context.Background(), "itemknn", s, cache, Tuning{Grid: recsys.Grid{K: []int{5, 20, 50}}, ValidationUsers: -1})
	if err != nil {
		t.Fatal(err)
	}
	if tuned.Train != s.Train {
		t.Error("itemknn refits on another matrix than the split's")
	}
	want, err := evaluateLive(context.Background(), tuned.Model, s.Train, s.Live, s.Validation)
	if err != nil {
		t.Fatal(err)
	}
	if tuned.Validation != want || want[metrics.MADG] < 0.3 {
		t.Errorf("validation %v, want %v (and an ADG above 0.3)", tuned.Validation, want)
	}
	empty, _ := Evaluate(context.Background(), tuned.Model, s.Train, s.Validation)
	if empty == want {
		t.Error("ranking from the (empty) training rows gives the same measures")
	}
}

// withLiveRows gives the validation users their live histories as rows and
// keeps the test users out.
func TestWithLiveRows(t *testing.T) {
	d := clustered(5, 100, 60, 3, 14)
	s, err := NewSplit(d, Users, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	x, err := withLiveRows(s.Train, s.Live, s.Validation)
	if err != nil {
		t.Fatal(err)
	}
	for u := range x.Users() {
		switch {
		case len(s.Validation[u]) > 0:
			if !slices.Equal(x.Row(u), s.Live[u]) {
				t.Fatalf("validation user %d: row %v, live %v", u, x.Row(u), s.Live[u])
			}
		case len(s.Test[u]) > 0:
			if x.UserCount(u) != 0 {
				t.Fatalf("test user %d has a row", u)
			}
		default:
			if !slices.Equal(x.Row(u), s.Train.Row(u)) {
				t.Fatalf("training user %d changed", u)
			}
		}
	}
}

// Run under the users and time protocols: every model scores the held-out
// users, personalised ones beat popularity, the time protocol reports the
// standard errors over users of its single split, and the fold limits
// hold.
func TestRun_usersAndTimeProtocols(t *testing.T) {
	d := clustered(3, 300, 240, 6, 24)
	d.Times = make([]int64, len(d.Users))
	for k := range d.Times {
		d.Times[k] = int64(k) // in generation order
	}
	for _, protocol := range []string{Users, Time} {
		opt := smallOptions()
		opt.Protocol, opt.Folds = protocol, 0
		opt.Models = []string{"popular", "itemknn", "slim"}
		rep, err := Run(context.Background(), d, opt)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{Users: 3, Time: 1}[protocol]; rep.Folds != want {
			t.Errorf("%s: %d folds, want %d", protocol, rep.Folds, want)
		}
		pop := rep.Rows[0].Metrics["adg"]
		for _, row := range rep.Rows[1:] {
			if adg := row.Metrics["adg"]; adg.Mean <= pop.Mean*1.1 || adg.SE <= 0 {
				t.Errorf("%s: %s ADG %+v, popular %+v", protocol, row.Model, adg, pop)
			}
		}
		if got := rep.Rows[1].Settings["se"]; (protocol == Time) != (got != "") {
			t.Errorf("%s: se setting %q", protocol, got)
		}
	}
	for _, bad := range []Options{{Protocol: Time, Folds: 2}, {Protocol: Users, Folds: 6}, {Protocol: "later"}} {
		if _, err := Run(context.Background(), d, bad); err == nil {
			t.Errorf("Run accepted %+v", bad)
		}
	}
}
