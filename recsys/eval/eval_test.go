package eval

import (
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// clustered generates users in clusters who mostly consume the items of
// their own cluster (skewed within it) and otherwise globally popular
// items: personalised models should beat popularity on it.
func clustered(seed uint64, users, items, clusters, perUser int) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	d := &Dataset{Name: "clustered"}
	for u := range users {
		d.UserIDs = append(d.UserIDs, "u"+strconv.Itoa(u))
	}
	for i := range items {
		d.ItemIDs = append(d.ItemIDs, "i"+strconv.Itoa(i))
	}
	per := items / clusters
	for u := range users {
		c := u % clusters
		n := perUser/2 + rng.IntN(perUser)
		seen := map[int]bool{}
		for len(seen) < n {
			var i int
			if rng.Float64() < 0.75 {
				i = c*per + int(float64(per)*rng.Float64()*rng.Float64())
			} else {
				i = int(float64(items) * math.Pow(rng.Float64(), 3))
			}
			if !seen[i] {
				seen[i] = true
				d.Users = append(d.Users, uint32(u))
				d.Items = append(d.Items, uint32(i))
			}
		}
	}
	return d
}

func TestHoldOutSizes(t *testing.T) {
	for _, tc := range []struct{ n, val, test int }{
		{0, 0, 0}, {4, 0, 0}, {5, 1, 1}, {7, 1, 1}, {8, 1, 2}, {10, 1, 2}, {15, 2, 3}, {20, 2, 4}, {100, 10, 20},
	} {
		v, te := holdOutSizes(tc.n, DefaultMinPositives)
		if v != tc.val || te != tc.test {
			t.Errorf("holdOutSizes(%d) = %d, %d; want %d, %d", tc.n, v, te, tc.val, tc.test)
		}
	}
}

func TestNewSplit_standard(t *testing.T) {
	d := clustered(1, 120, 80, 4, 16)
	pos, _ := d.positives()
	s, err := NewSplit(d, Standard, 7, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	for u, items := range pos {
		train := s.Train.Row(u)
		all := slices.Concat(train, s.Validation[u], s.Test[u])
		slices.Sort(all)
		if !slices.Equal(all, items) {
			t.Fatalf("user %d: train ∪ validation ∪ test = %v, want O⁺u = %v", u, all, items)
		}
		wantVal, wantTest := holdOutSizes(len(items), DefaultMinPositives)
		if len(s.Validation[u]) != wantVal || len(s.Test[u]) != wantTest {
			t.Fatalf("user %d with %d positives: %d validation, %d test", u, len(items), len(s.Validation[u]), len(s.Test[u]))
		}
	}
	again, _ := NewSplit(d, Standard, 7, 0, DefaultMinPositives)
	other, _ := NewSplit(d, Standard, 7, 1, DefaultMinPositives)
	same, differ := true, false
	for u := range pos {
		same = same && slices.Equal(s.Test[u], again.Test[u]) && slices.Equal(s.Validation[u], again.Validation[u])
		differ = differ || !slices.Equal(s.Test[u], other.Test[u])
	}
	if !same {
		t.Fatal("the same seed and fold gave different splits")
	}
	if !differ {
		t.Fatal("two folds gave the same split")
	}
}

// Uniform sampling: over many folds every positive of a user is a test
// item about 20% of the time.
func TestNewSplit_uniform(t *testing.T) {
	d := &Dataset{}
	for i := range 10 {
		d.Users = append(d.Users, 0)
		d.Items = append(d.Items, uint32(i))
	}
	const folds = 4000
	count := make([]int, 10)
	for f := range folds {
		s, _ := NewSplit(d, Standard, 3, f, DefaultMinPositives)
		for _, i := range s.Test[0] {
			count[i]++
		}
	}
	for i, c := range count {
		// 2 of 10 items per fold: p = 0.2, sd of the count ≈ 25.
		if math.Abs(float64(c)-0.2*folds) > 5*math.Sqrt(folds*0.2*0.8) {
			t.Errorf("item %d was a test item %d times in %d folds", i, c, folds)
		}
	}
}

func TestNewSplit_novelty(t *testing.T) {
	d := clustered(2, 200, 400, 4, 30)
	pos, _ := d.positives()
	top := topItems(pos, 400)
	nTop := 0
	for _, b := range top {
		if b {
			nTop++
		}
	}
	if nTop != NoveltyTop {
		t.Fatalf("%d top items, want %d", nTop, NoveltyTop)
	}
	s, err := NewSplit(d, Novelty, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for u := range pos {
		for _, i := range slices.Concat(s.Validation[u], s.Test[u]) {
			held++
			if top[i] {
				t.Fatalf("user %d: held-out item %d is among the %d most popular", u, i, NoveltyTop)
			}
		}
	}
	if held == 0 {
		t.Fatal("no held-out items")
	}
}

// Tune caps k by the data whoever calls it: item-based candidates stop at
// the first k at or above the longest item neighbour list, user-based ones
// at the first k at or above |U| − 1, and the choice is one of them.
func TestTune_capsByData(t *testing.T) {
	ctx := context.Background()
	d := clustered(7, 60, 50, 3, 14)
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	g := recsys.Grid{K: []int{5, 10, 20, 50, 100, 200, 500}}
	cache := recsys.NewNeighbourCache(s.Train, 500)
	caps, err := dataCaps(ctx, s.Train, cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		limit int
	}{{"itemknn", caps.Items}, {"userknn", caps.Users}} {
		tu, err := Tune(ctx, tc.name, s, cache, Tuning{Grid: g, ValidationUsers: 20})
		if err != nil {
			t.Fatal(err)
		}
		want := recsys.CapK(g.K, tc.limit)
		var got []int
		for _, p := range tu.Candidates {
			got = append(got, p.K)
		}
		if len(want) == len(g.K) || !slices.Equal(got, want) {
			t.Errorf("%s (cap %d): candidates k = %v, want %v, shorter than the grid", tc.name, tc.limit, got, want)
		}
		if !slices.Contains(want, tu.Params.K) || tu.Refit.K != tu.Params.K || tu.Validation[metrics.MADG] != tu.ValidationADG {
			t.Errorf("%s: chose %+v (refit %+v), validation ADG %g vs %g", tc.name, tu.Params, tu.Refit, tu.Validation[metrics.MADG], tu.ValidationADG)
		}
	}
}

func TestDescribeGrid(t *testing.T) {
	got := describeGrid(configs("slim", Grid{K: []int{10, 20, 50}, L1: []float64{1, 0.1}, L2: []float64{10}}, 30, 99))
	if want := "k∈{10,20,50} × l1∈{1,0.1} × l2∈{10}"; got != want {
		t.Errorf("slim grid = %q, want %q", got, want)
	}
	if got := describeGrid(configs("popular", DefaultGrid(), 30, 99)); got != "-" {
		t.Errorf("popular grid = %q", got)
	}
}

func TestMeanSE(t *testing.T) {
	m, se := meanSE([]float64{1, 2, 6})
	// mean 3, sample variance (4+1+9)/2 = 7, se = √7/√3.
	if m != 3 || math.Abs(se-math.Sqrt(7.0/3)) > 1e-15 {
		t.Fatalf("meanSE = %g, %g", m, se)
	}
	if m, se := meanSE([]float64{0.5}); m != 0.5 || se != 0 {
		t.Fatalf("meanSE of one value = %g, %g", m, se)
	}
}

func smallOptions() Options {
	return Options{
		Folds: 2,
		Seed:  1,
		Grid:  Grid{K: []int{10, 20, 50}, L1: []float64{1, 0.1}, L2: []float64{1}},
	}
}

func TestRun_personalisedBeatPopular(t *testing.T) {
	d := clustered(3, 300, 240, 6, 24)
	for _, protocol := range []string{Standard, Novelty} {
		opt := smallOptions()
		opt.Protocol = protocol
		opt.Models = []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim"}
		rep, err := Run(context.Background(), d, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 8 || rep.Rows[0].Model != "popular" || rep.Rows[7].Model != AutoRow {
			t.Fatalf("rows: %+v", rep.Rows)
		}
		// Every row's measures summarise its folds; the auto row's fold f
		// is the fold of the row with the best validation ADG there.
		for _, row := range rep.Rows {
			if len(row.Folds) != opt.Folds {
				t.Fatalf("%s has %d folds", row.Model, len(row.Folds))
			}
			for _, key := range metrics.Names {
				sum := 0.0
				for _, f := range row.Folds {
					sum += f.Test[key]
				}
				if got := row.Metrics[key].Mean; math.Abs(got-sum/float64(len(row.Folds))) > 1e-12 {
					t.Errorf("%s %s: mean %g, folds %+v", row.Model, key, got, row.Folds)
				}
			}
		}
		for f := range opt.Folds {
			best := rep.Rows[0]
			for _, row := range rep.Rows[1:7] {
				if row.Folds[f].ValidationADG > best.Folds[f].ValidationADG {
					best = row
				}
			}
			if got := rep.Rows[7].Folds[f]; got.Model != best.Model || got.Test["adg"] != best.Folds[f].Test["adg"] {
				t.Errorf("%s fold %d: auto chose %s (test ADG %g), want %s (%g)", protocol, f+1, got.Model, got.Test["adg"], best.Model, best.Folds[f].Test["adg"])
			}
		}
		pop := rep.Rows[0].Metrics
		for _, row := range rep.Rows[1:] {
			for _, key := range []string{"adg", "map"} {
				if got, base := row.Metrics[key].Mean, pop[key].Mean; got <= base*1.1 {
					t.Errorf("%s: %s %s = %.4f, popular %.4f", protocol, row.Model, key, got, base)
				}
			}
		}
		for _, row := range rep.Rows {
			if len(row.Metrics) != metrics.NumMeasures {
				t.Fatalf("%s has %d measures", row.Model, len(row.Metrics))
			}
			if row.Model != "popular" && row.Model != AutoRow && row.Params["k"] == 0 {
				t.Errorf("%s: no k in params %v", row.Model, row.Params)
			}
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

// The dump lets an independent tool recompute every number: the test ADG
// recomputed from the dumped ranks equals the report's, and the dumped
// ranks agree with the dumped top-100 lists.
func TestRun_dumpIsConsistent(t *testing.T) {
	d := clustered(4, 150, 120, 4, 20)
	dir := t.TempDir()
	opt := smallOptions()
	opt.Folds = 1
	opt.Models = []string{"popular", "itemknn", "userknn"}
	opt.DumpDir = dir
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	fold := filepath.Join(dir, "fold-1")
	test := map[string]bool{}
	for _, r := range readCSV(t, filepath.Join(fold, "test.csv")) {
		test[r[0]+"|"+r[1]] = true
	}
	nPairs := len(readCSV(t, filepath.Join(fold, "train.csv"))) + len(readCSV(t, filepath.Join(fold, "validation.csv"))) + len(test)
	if nPairs != len(d.Users) {
		t.Fatalf("the split files hold %d pairs, the data %d", nPairs, len(d.Users))
	}
	for _, row := range rep.Rows {
		ranks := map[string]int{}
		byUser := map[string][]int{}
		file := row.Model
		if row.Model == AutoRow { // the auto row's measures are its choice's
			file = row.Folds[0].Model
		}
		for _, r := range readCSV(t, filepath.Join(fold, file+".ranks.csv")) {
			k, _ := strconv.Atoi(r[2])
			ranks[r[0]+"|"+r[1]] = k
			if test[r[0]+"|"+r[1]] {
				byUser[r[0]] = append(byUser[r[0]], k)
			}
		}
		sum := 0.0
		for _, rs := range byUser {
			sum += metrics.ADG(rs)
		}
		if got, want := sum/float64(len(byUser)), row.Metrics["adg"].Mean; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: ADG from the dump %.6f, report %.6f", row.Model, got, want)
		}
		checked := 0
		for _, r := range readCSV(t, filepath.Join(fold, file+".top100.csv")) {
			if k, ok := ranks[r[0]+"|"+r[1]]; ok {
				checked++
				if strconv.Itoa(k) != r[2] {
					t.Fatalf("%s: %s ranked %s in top100 but %d in ranks", row.Model, r[0]+"|"+r[1], r[2], k)
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no held-out item in any top-100 list", row.Model)
		}
	}
}

func TestWriteTable(t *testing.T) {
	d := clustered(5, 80, 60, 2, 12)
	opt := smallOptions()
	opt.Models = []string{"popular", "slim"}
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"adg", "rec@10", "ndcg@10", "mrr", "popular", "slim", "k=", "l1=", " ("} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRun_rejectsBadOptions(t *testing.T) {
	d := clustered(6, 20, 20, 2, 8)
	if _, err := Run(context.Background(), d, Options{Protocol: "nope"}); err == nil {
		t.Error("Run accepted an unknown protocol")
	}
	if _, err := Run(context.Background(), d, Options{Models: []string{"nope"}}); err == nil {
		t.Error("Run accepted an unknown model")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, d, Options{}); err == nil {
		t.Error("Run ignored a cancelled context")
	}
}

// itemKNNOnSplit splits d by the standard protocol (seed 1, fold 0) and
// fits item KNN with k on the training part.
func itemKNNOnSplit(t *testing.T, d *Dataset, k int) (*Split, recsys.Model) {
	t.Helper()
	s, err := NewSplit(d, Standard, 1, 0, DefaultMinPositives)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recsys.New("itemknn")
	if err := m.Fit(context.Background(), s.Train, recsys.Params{K: k}); err != nil {
		t.Fatal(err)
	}
	return s, m
}

// Evaluate agrees with the measures recomputed from recsys.Ranks.
func TestEvaluate_matchesRanks(t *testing.T) {
	d := clustered(7, 60, 50, 3, 14)
	s, m := itemKNNOnSplit(t, d, 10)
	got, err := Evaluate(context.Background(), m, s.Train, s.Test)
	if err != nil {
		t.Fatal(err)
	}
	var want metrics.Values
	users := 0
	scores := make([]float64, s.Train.Items())
	for u, items := range s.Test {
		if len(items) == 0 {
			continue
		}
		users++
		recsys.ScoreUser(m, u, s.Train.Row(u), scores)
		v := metrics.All(recsys.Ranks(scores, s.Train.Popularity(), s.Train.Row(u), items), s.Train.Items()-s.Train.UserCount(u))
		for k := range v {
			want[k] += v[k]
		}
	}
	for k := range want {
		if want[k] /= float64(users); math.Abs(got[k]-want[k]) > 1e-12 {
			t.Errorf("%s = %g, want %g", metrics.Names[k], got[k], want[k])
		}
	}
}

// Progress counts never pass their totals: a grid extension fits more
// than the grid holds, and the total grows with it, ending at the count.
func TestRun_progressWithinTotal(t *testing.T) {
	d := clustered(3, 300, 240, 6, 24)
	opt := smallOptions()
	opt.Folds = 1
	opt.Grid.K = []int{10, 20} // the choice sits at an end, which the search extends
	opt.Models = []string{"popular", "itemknn", "userknn"}
	type call struct{ done, total int }
	var calls []call
	opt.Progress = func(_ string, done, total int) { calls = append(calls, call{done, total}) }
	rep, err := Run(context.Background(), d, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("no progress reported")
	}
	for k, c := range calls {
		if c.done > c.total || c.done != k+1 {
			t.Fatalf("call %d: %d/%d", k, c.done, c.total)
		}
	}
	first, last := calls[0], calls[len(calls)-1]
	if last.done != last.total {
		t.Fatalf("ended at %d/%d", last.done, last.total)
	}
	// 1 fit of popular, 2 of itemknn and 2 of userknn on the grid, and a
	// test each: the extensions past k = 10 or 20 make the rest.
	if first.total != 8 || last.total <= first.total {
		t.Fatalf("totals %d then %d, want 8 growing with the extensions (rows %d)", first.total, last.total, len(rep.Rows))
	}
}

// With searches shared between rows (febr-blend's bases, FEBR's slim),
// a row fits fewer than its plan or more: the count still never passes
// the total and every fold ends at done = total.
func TestRun_progressWithSharedSearches(t *testing.T) {
	d := clustered(5, 120, 90, 4, 14)
	for _, models := range [][]string{{"kunn", "febr-blend", "slim"}, {"febr", "slim"}, {"slim", "febr"}} {
		opt := Options{Folds: 2, Seed: 2, Models: models,
			Grid: Grid{K: []int{10, 20}, L1: []float64{1}, L2: []float64{1}, Factors: []int{4, 8}, Lambda: []float64{1e-2}}}
		ends := map[string][2]int{}
		opt.Progress = func(stage string, done, total int) {
			if done > total {
				t.Errorf("%v: %s %d/%d", models, stage, done, total)
			}
			ends[stage[:len("fold 1/2")]] = [2]int{done, total}
		}
		if _, err := Run(context.Background(), d, opt); err != nil {
			t.Fatal(err)
		}
		if len(ends) != 2 {
			t.Fatalf("%v: progress of %d folds", models, len(ends))
		}
		for fold, e := range ends {
			if e[0] != e[1] {
				t.Errorf("%v: %s ended at %d/%d", models, fold, e[0], e[1])
			}
		}
	}
}
