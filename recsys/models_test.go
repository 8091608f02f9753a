package recsys

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/blob/blobtest"
	"github.com/recsys-engine/recsys/recsys/internal/brute"
)

// ownModels are the models of this file's concern (other models register
// themselves in the same registry and have their own tests).
var ownModels = []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta"}

func fitted(t testing.TB, name string, x *Matrix, p Params) Model {
	t.Helper()
	m, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(context.Background(), x, p); err != nil {
		t.Fatal(err)
	}
	return m
}

// Item-p is aggsum over O⁺u ∩ KNN(i) of cos(i, j) (Thm 4.3).
func TestItemP_Score_aggsumCosine(t *testing.T) {
	x, d := randomMatrix(t, 21, 40, 30, 0.15)
	const k = 4
	m := fitted(t, "itemknn", x, Params{K: k})
	c := brute.ColCounts(d)
	scores := make([]float64, 30)
	for u := range x.Users() {
		m.Score(x.Row(u), scores)
		for i := range scores {
			sim := make([]float64, 30)
			for j := range sim {
				if c[i] == 0 || c[j] == 0 {
					continue
				}
				co := 0
				for v := range d {
					if d[v][i] && d[v][j] {
						co++
					}
				}
				sim[j] = float64(co) / math.Sqrt(float64(c[i])*float64(c[j]))
			}
			want := 0.0
			for _, e := range bruteKNN(sim, i, k) {
				if d[u][e.Index] {
					want += e.Value
				}
			}
			if !closeTo(scores[i], want, 1e-12) {
				t.Fatalf("score(%d, %d) = %g, want %g", u, i, scores[i], want)
			}
		}
	}
}

// SLIM scores are (XW)_ui = Σ_{l ∈ O⁺u} W(l, i) (§4.5.5).
func TestSLIM_Score_isXW(t *testing.T) {
	x, d := randomMatrix(t, 22, 50, 20, 0.2)
	m := fitted(t, "slim", x, Params{K: 6, L1: 0.5, L2: 0.5})
	sl := m.(*ItemP)
	scores := make([]float64, 20)
	for u := range x.Users() {
		m.Score(x.Row(u), scores)
		for i := range scores {
			want := 0.0
			for _, e := range sl.Similar(uint32(i)) {
				if d[u][e.Index] {
					want += e.Value
				}
			}
			if !closeTo(scores[i], want, 1e-12) {
				t.Fatalf("score(%d, %d) = %g, want %g", u, i, scores[i], want)
			}
		}
	}
}

func TestUserP_Score_liveHistory(t *testing.T) {
	for _, name := range []string{"userknn", "kunn-u"} {
		x, d := randomMatrix(t, 23, 40, 30, 0.15)
		const k = 5
		m := fitted(t, name, x, Params{K: k})
		rng := rand.New(rand.NewPCG(5, 5))
		scores := make([]float64, 30)
		for u := range x.Users() {
			// The live history: the training row with one item removed and
			// two items added.
			live := slices.Clone(d[u])
			if h := historyOf(d, u); len(h) > 0 {
				live[h[rng.IntN(len(h))]] = false
			}
			live[rng.IntN(30)], live[rng.IntN(30)] = true, true
			var hist []uint32
			for i, b := range live {
				if b {
					hist = append(hist, uint32(i))
				}
			}
			want := brute.UserP(d, live, u, k, name == "kunn-u")
			m.(UserScorer).ScoreUser(u, hist, scores)
			for i := range scores {
				if !closeTo(scores[i], want[i], 1e-12) {
					t.Fatalf("%s: score(%d, %d) = %g, want %g", name, u, i, scores[i], want[i])
				}
			}
			// Score treats the history as a new user: no row is left out.
			want = brute.UserP(d, live, -1, k, name == "kunn-u")
			m.Score(hist, scores)
			for i := range scores {
				if !closeTo(scores[i], want[i], 1e-12) {
					t.Fatalf("%s: Score(%d, %d) = %g, want %g", name, u, i, scores[i], want[i])
				}
			}
		}
	}
}

func TestUserP_Score_followsHistoryChange(t *testing.T) {
	x, _ := randomMatrix(t, 24, 40, 30, 0.15)
	m := fitted(t, "userknn", x, Params{K: 5})
	before, after := make([]float64, 30), make([]float64, 30)
	h := x.Row(3)
	m.Score(h, before)
	live := slices.Clone(h)
	for i := uint32(0); i < 30 && len(live) == len(h); i++ {
		if !slices.Contains(h, i) {
			live = append(live, i)
		}
	}
	slices.Sort(live)
	m.Score(live, after)
	if slices.Equal(before, after) {
		t.Fatal("scores did not change with the live history")
	}
}

func TestModel_Score_unknownItems(t *testing.T) {
	x, _ := randomMatrix(t, 25, 30, 20, 0.2)
	for _, name := range ownModels {
		m := fitted(t, name, x, Params{K: 5})
		h := x.Row(2)
		want := make([]float64, 20)
		ScoreUser(m, -1, h, want)
		// Items unknown at fit time in the history are ignored, and the
		// extra score slots are zero.
		got := make([]float64, 25)
		for i := range got {
			got[i] = 7
		}
		m.Score(append(slices.Clone(h), 20, 23), got)
		if !slices.Equal(got[:20], want) || !slices.Equal(got[20:], make([]float64, 5)) {
			t.Fatalf("%s: unknown items changed the scores: %v vs %v", name, got, want)
		}
	}
}

func TestModel_MarshalBinary_roundTrip(t *testing.T) {
	x, _ := randomMatrix(t, 26, 50, 40, 0.15)
	for _, name := range ownModels {
		t.Run(name, func(t *testing.T) {
			m := fitted(t, name, x, Params{K: 6, L1: 0.5, L2: 1})
			_, back := roundTrip(t, name, m, x)
			if !slices.Equal(paramTriple(m), paramTriple(back)) {
				t.Fatal("parameters differ after the round trip")
			}
		})
	}
}

// roundTrip encodes m (fitted as name) and loads the bytes: the loaded model is name,
// encodes to the same bytes and scores every user of x as m does. It
// returns the encoding and the loaded model.
func roundTrip(t *testing.T, name string, m Model, x *Matrix) ([]byte, Model) {
	t.Helper()
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name() != name {
		t.Fatalf("loaded %q", back.Name())
	}
	if again, _ := back.MarshalBinary(); !slices.Equal(data, again) {
		t.Fatal("re-encoding changed the bytes")
	}
	a, b := make([]float64, x.Items()), make([]float64, x.Items())
	for u := range x.Users() {
		ScoreUser(m, u, x.Row(u), a)
		ScoreUser(back, u, x.Row(u), b)
		if !slices.Equal(a, b) {
			t.Fatalf("user %d: scores differ after the round trip", u)
		}
	}
	return data, back
}

func paramTriple(m Model) []float64 {
	p := ParamsOf(m)
	return []float64{p["k"], p["l1"], p["l2"]}
}

func TestModel_Fit_deterministic(t *testing.T) {
	x := generated(t, 3, 300, 200, 15)
	for _, name := range ownModels {
		a, _ := fitted(t, name, x, Params{K: 20}).MarshalBinary()
		b, _ := fitted(t, name, x, Params{K: 20}).MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: two fits differ", name)
		}
	}
}

func TestModel_Fit_cancelled(t *testing.T) {
	x := generated(t, 3, 300, 200, 15)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"itemknn", "kunn", "kunn-i", "slim", "ease", "rp3beta"} {
		m, _ := New(name)
		if err := m.Fit(ctx, x, Params{}); err == nil {
			t.Errorf("%s: no error from a cancelled context", name)
		}
	}
}

func TestModel_Fit_cacheSameModel(t *testing.T) {
	x := generated(t, 4, 300, 200, 15)
	cache := NewNeighbourCache(x, 100)
	for _, name := range []string{"itemknn", "kunn", "kunn-i", "slim"} {
		a, _ := fitted(t, name, x, Params{K: 20}).MarshalBinary()
		b, _ := fitted(t, name, x, Params{K: 20, Cache: cache}).MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the cached fit differs", name)
		}
	}
}

func TestNew_unknown(t *testing.T) {
	if _, err := New("nope"); err == nil {
		t.Fatal("New accepted an unknown name")
	}
}

func TestLoad_rejectsCorrupt(t *testing.T) {
	x, _ := randomMatrix(t, 27, 20, 15, 0.2)
	for _, name := range ownModels {
		data, _ := fitted(t, name, x, Params{K: 3}).MarshalBinary()
		for _, bad := range [][]byte{nil, {9}, data[:len(data)-1], append(slices.Clone(data), 0)} {
			if _, err := Load(bad); err == nil {
				t.Errorf("%s: Load accepted %d corrupt bytes", name, len(bad))
			}
		}
		other := &Popular{}
		if name != "popular" {
			if err := other.UnmarshalBinary(data); err == nil {
				t.Errorf("popular decoded a %s model", name)
			}
		}
	}
}

func FuzzLoad(f *testing.F) {
	x, _ := randomMatrix(f, 28, 10, 8, 0.3)
	for _, name := range ownModels {
		m, _ := New(name)
		_ = m.Fit(context.Background(), x, Params{K: 3})
		data, _ := m.MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			m   Model
			err error
		)
		// Sizes read from corrupt bytes must not drive an allocation
		// out of proportion to the input.
		if n := blobtest.Allocated(func() { m, err = Load(data) }); n > uint64(64*len(data)+1<<20) {
			t.Fatalf("loading %d bytes allocated %d bytes", len(data), n)
		}
		if err != nil {
			return
		}
		// A model that decodes must score without panicking.
		scores := make([]float64, 64)
		m.Score([]uint32{0, 1, 2, 5, 100}, scores)
	})
}

// Scoring is safe for concurrent use and gives the same scores as a lone
// call (run under -race).
func TestModel_Score_concurrent(t *testing.T) {
	x := generated(t, 5, 200, 150, 12)
	for _, name := range ownModels {
		m := fitted(t, name, x, Params{K: 10})
		want := make([][]float64, x.Users())
		for u := range want {
			want[u] = make([]float64, x.Items())
			ScoreUser(m, u, x.Row(u), want[u])
		}
		errs := make(chan string, 4)
		for w := range 4 {
			go func() {
				scores := make([]float64, x.Items())
				msg := ""
				for u := w; u < x.Users(); u += 4 {
					ScoreUser(m, u, x.Row(u), scores)
					if msg == "" && !slices.Equal(scores, want[u]) {
						msg = name + ": concurrent scores differ"
					}
				}
				errs <- msg
			}()
		}
		for range 4 {
			if msg := <-errs; msg != "" {
				t.Fatal(msg)
			}
		}
	}
}

// TestUserP_ScoreUser_cachedNeighbours: with a neighbour cache, a training
// user scored with its own row takes KNN(u) from the memo at k_max; every
// k of a grid then scores as the brute-force user-p does, the lists are
// searched once per user, and a live history (not the row itself) is still
// searched afresh.
func TestUserP_ScoreUser_cachedNeighbours(t *testing.T) {
	x, d := randomMatrix(t, 29, 40, 30, 0.2)
	cache := NewNeighbourCache(x, 12)
	scores := make([]float64, 30)
	for _, name := range []string{"userknn", "kunn-u"} {
		kunn := name == "kunn-u"
		for _, k := range []int{12, 3, 7} {
			m := fitted(t, name, x, Params{K: k, Cache: cache})
			for u := range x.Users() {
				m.(UserScorer).ScoreUser(u, x.Row(u), scores)
				want := brute.UserP(d, d[u], u, k, kunn)
				for i := range scores {
					if !closeTo(scores[i], want[i], 1e-12) {
						t.Fatalf("%s k=%d: score(%d, %d) = %g, want %g", name, k, u, i, scores[i], want[i])
					}
				}
			}
		}
		kind := SimCosine
		if kunn {
			kind = SimKUNN
		}
		memo := cache.users[kind]
		if memo == nil {
			t.Fatalf("%s: no memo of user lists", name)
		}
		for u := range x.Users() {
			row := memo.rows[u].Load()
			if row == nil {
				t.Fatalf("%s: user %d has no memoised list", name, u)
			}
			if want := bruteKNNOfUser(d, u, 12, kunn); !slices.EqualFunc(*row, want, func(a, b Neighbour) bool {
				return a.Index == b.Index && closeTo(a.Value, b.Value, 1e-12)
			}) {
				t.Fatalf("%s: memo of user %d = %v, want %v", name, u, *row, want)
			}
		}
	}
	// A live history equal in content but not the row: no memo entry is
	// read or written for it.
	m := fitted(t, "userknn", x, Params{K: 5, Cache: cache})
	memo := cache.users[SimCosine]
	old := memo.rows[0].Load()
	bogus := []Neighbour{}
	memo.rows[0].Store(&bogus)
	m.(UserScorer).ScoreUser(0, slices.Clone(x.Row(0)), scores)
	want := brute.UserP(d, d[0], 0, 5, false)
	for i := range scores {
		if !closeTo(scores[i], want[i], 1e-12) {
			t.Fatalf("live history: score(0, %d) = %g, want %g", i, scores[i], want[i])
		}
	}
	memo.rows[0].Store(old)
}

// bruteKNNOfUser is KNN(u) at k over U \ u by the cosine or KUNN user
// similarity, in KNN order.
func bruteKNNOfUser(d [][]bool, u, k int, kunn bool) []Neighbour {
	sim := make([]float64, len(d))
	for v := range d {
		if kunn {
			sim[v] = brute.KUNNUserSim(d, d[u], v)
			continue
		}
		co, cu, cv := 0, 0, 0
		for j := range d[v] {
			if d[u][j] {
				cu++
			}
			if d[v][j] {
				cv++
			}
			if d[u][j] && d[v][j] {
				co++
			}
		}
		if co > 0 {
			sim[v] = float64(co) / math.Sqrt(float64(cu)*float64(cv))
		}
	}
	return bruteKNN(sim, u, k)
}

// TestKUNN_ScoreUser_cachedNeighbours: kunn's user side through the memo
// scores training users as without a cache.
func TestKUNN_ScoreUser_cachedNeighbours(t *testing.T) {
	x := generated(t, 4, 300, 200, 15)
	cache := NewNeighbourCache(x, 50)
	for _, k := range []int{50, 20} {
		plain := fitted(t, "kunn", x, Params{K: k})
		cached := fitted(t, "kunn", x, Params{K: k, Cache: cache})
		a, b := make([]float64, 200), make([]float64, 200)
		for u := range x.Users() {
			ScoreUser(plain, u, x.Row(u), a)
			ScoreUser(cached, u, x.Row(u), b)
			if !slices.Equal(a, b) {
				t.Fatalf("k=%d user %d: cached scores differ", k, u)
			}
		}
	}
	if cache.users[SimKUNN] == nil {
		t.Fatal("kunn did not use the memo")
	}
}
