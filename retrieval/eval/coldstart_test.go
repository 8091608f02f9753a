package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
	"github.com/recsys-engine/recsys/retrieval"
)

// groupedInteractions: items fall in g groups with a distinctive feature
// pattern (group one-hot plus noise); each user likes items of one group
// only. Content similarity therefore predicts collaborative similarity and
// cold items of a user's group.
func groupedInteractions(nUsers, nItems, g int, seed uint64) *Interactions {
	rng := rand.New(rand.NewPCG(seed, 1))
	in := &Interactions{Name: "grouped", Users: nUsers, Items: nItems}
	group := make([]int, nItems)
	byGroup := make([][]int, g)
	for i := range group {
		group[i] = i % g
		byGroup[group[i]] = append(byGroup[group[i]], i)
		f := make([]float64, g+3)
		f[group[i]] = 1
		for k := g; k < g+3; k++ { // pure noise features
			f[k] = rng.NormFloat64()
		}
		in.Features = append(in.Features, f)
	}
	for u := 0; u < nUsers; u++ {
		items := byGroup[u%g]
		for _, k := range rng.Perm(len(items))[:len(items)/3] {
			in.Pairs = append(in.Pairs, recsys.Pair{User: uint32(u), Item: uint32(items[k])})
			in.Times = append(in.Times, int64(len(in.Pairs)))
		}
	}
	return in
}

// TestEvalColdStart_grouped: on data where content determines taste, content
// neighbours recover the collaborative ones and content cold-start beats the
// random ranking by far; the random baseline's REC@10 is near its
// expectation 10/|cold| (every user's held-out positives are a random
// subset of the cold items).
func TestEvalColdStart_grouped(t *testing.T) {
	in := groupedInteractions(200, 400, 8, 1)
	rep, err := ColdStart(context.Background(), in, ColdStartOptions{
		Methods: []string{retrieval.MethodEuclidean, retrieval.MethodFRML}, Splits: 2, Seed: 3, FRMLIterations: 2000,
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, key string) float64 {
		for _, r := range rep.Rows {
			if r.Method == method {
				v, ok := r.Metrics[key]
				if !ok {
					t.Fatalf("%s has no %s", method, key)
				}
				return v.Mean
			}
		}
		t.Fatalf("no row %s", method)
		return 0
	}
	random := get(BaselineRandom, KeyRec10)
	if want := 10.0 / 40; math.Abs(random-want) > 0.08 {
		t.Errorf("random REC@10 = %.3f, expected about %.3f", random, want)
	}
	for _, m := range []string{retrieval.MethodEuclidean, retrieval.MethodFRML} {
		if r := get(m, KeyRec10); r < 2*random {
			t.Errorf("%s REC@10 = %.3f, want at least twice random (%.3f)", m, r, random)
		}
		// A cold item's 10 collaborative neighbours are items of its group
		// (49 warm ones): content ranks the group first, so P@10 ≈ 10/49·…
		// at least; require the top 10 to beat a random draw fivefold.
		if p := get(m, KeyNbP10); p < 5*10.0/360 {
			t.Errorf("%s neighbour P@10 = %.3f", m, p)
		}
	}
	if _, ok := rep.Rows[2].Metrics[KeyNbMAP]; ok {
		t.Error("the random baseline has no neighbour-recovery column")
	}
	var sb strings.Builder
	if err := WriteColdStartTable(&sb, rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + sb.String())
	if !strings.Contains(sb.String(), "oracle-popularity") {
		t.Errorf("table lacks the baselines:\n%s", sb.String())
	}
}

func TestEvalColdStart_badInput(t *testing.T) {
	ctx := context.Background()
	if _, err := ColdStart(ctx, nil, ColdStartOptions{}); err == nil {
		t.Error("nil data: want an error")
	}
	in := groupedInteractions(20, 40, 4, 1)
	if _, err := ColdStart(ctx, in, ColdStartOptions{Methods: []string{"nope"}}); err == nil {
		t.Error("unknown method: want an error")
	}
	in.Times = in.Times[:1]
	if _, err := ColdStart(ctx, in, ColdStartOptions{}); err == nil {
		t.Error("times do not match pairs: want an error")
	}
}

// ml100kDir is ../shared/datasets/ml-100k from the repository root.
var ml100kDir = filepath.Join("..", "..", "..", "shared", "datasets", "ml-100k")

// TestLoadInteractions_ml100k checks the reader against counts taken with
// awk from u.data and u.item (ratings ≥ 4: 55,375 pairs by 942 users; 19
// genre flags; 216 distinct genre vectors) and runs one cheap cold-start
// split. It needs ../shared/datasets/ml-100k.
func TestLoadInteractions_ml100k(t *testing.T) {
	datasettest.Require(t, filepath.Join(ml100kDir, "u.data"))
	in, err := LoadInteractions("movielens", ml100kDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Pairs) != 55375 || in.Users != 942 || in.Items != 1682 || len(in.FeatureNames) != 19 {
		t.Fatalf("got %d pairs, %d users, %d items, %d features; want 55375, 942, 1682, 19",
			len(in.Pairs), in.Users, in.Items, len(in.FeatureNames))
	}
	distinct := map[string]bool{}
	for _, f := range in.Features {
		distinct[fmtVec(f)] = true
	}
	if len(distinct) != 216 {
		t.Errorf("%d distinct genre vectors, want 216", len(distinct))
	}
	if testing.Short() || raceEnabled {
		return
	}
	rep, err := ColdStart(context.Background(), in, ColdStartOptions{Methods: []string{retrieval.MethodEuclidean}, Splits: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 10 relevant among 1,514 warm items: a random ranking has P@10 ≈ 0.0066.
	if p := rep.Rows[0].Metrics[KeyNbP10].Mean; p < 0.015 {
		t.Errorf("euclidean genre neighbours P@10 = %.4f, not above chance", p)
	}
}

func fmtVec(v []float64) string {
	var sb strings.Builder
	for _, x := range v {
		if x != 0 {
			sb.WriteString("1 ")
		} else {
			sb.WriteString("0 ")
		}
	}
	return sb.String()
}

// TestContentScores_handComputed: history items at squared distances 1 and
// 4 from a cold item give min = 1 and sum-exp = −(e⁻¹ + e⁻⁴).
func TestContentScores_handComputed(t *testing.T) {
	sp := &coldSplit{cold: []int{0}, hist: [][]int{{1, 2}}}
	proj := [][]float64{{0, 0}, {1, 0}, {0, 2}}
	score := make([]float64, 1)
	sp.contentScores(proj, 0, AggregateMin, score)
	if score[0] != 1 {
		t.Errorf("min = %v, want 1", score[0])
	}
	sp.contentScores(proj, 0, AggregateSumExp, score)
	if want := -(math.Exp(-1) + math.Exp(-4)); math.Abs(score[0]-want) > 1e-15 {
		t.Errorf("sum-exp = %v, want %v", score[0], want)
	}
	if _, err := ColdStart(context.Background(), groupedInteractions(20, 40, 4, 1), ColdStartOptions{Aggregate: "max"}); err == nil {
		t.Error("unknown aggregate: want an error")
	}
}
