package febr

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/synth"
)

// benchMatrix is a generated MovieLens-100K-sized matrix: 1,000 users,
// 1,700 items, about 60 positives per user.
func benchMatrix(b *testing.B) *recsys.Matrix {
	b.Helper()
	return generated(b, 42, 1000, 1700, 60)
}

// scoreUsers measures scoring one user's history and taking the top 10,
// as a recommendation request does, cycling through the users of x.
func scoreUsers(b *testing.B, m recsys.Model, x *recsys.Matrix) {
	scores := make([]float64, x.Items())
	pop := x.Popularity()
	b.ResetTimer()
	u := 0
	for b.Loop() {
		h := x.Row(u % x.Users())
		m.Score(h, scores)
		recsys.TopN(scores, pop, h, 10)
		u++
	}
}

// BenchmarkFEBRFit fits FEBR on a generated MovieLens-100K-sized matrix
// (benchMatrix) with k = 50 and early stopping on a 10% validation
// hold-out: the affinities (fsSLIM for i-slim), the feature memo and
// OPT-ADG; the streaming cases keep no memo.
func BenchmarkFEBRFit(b *testing.B) {
	x := benchMatrix(b)
	train, val := holdOut(b, x, 0.1, 1)
	for _, c := range []struct {
		name   string
		budget int64
	}{{"febr-i-slim", 0}, {"febr-iu-kunn", 0}, {"febr-i-slim", -1}, {"febr-iu-kunn", -1}} {
		name := c.name
		label := name
		if c.budget < 0 {
			label += "/streaming" // no memo: the path of 10⁶ events and more
		}
		b.Run(label, func(b *testing.B) {
			cache := recsys.NewNeighbourCache(train, 50)
			if _, err := cache.MaxRow(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				m, _ := recsys.New(name)
				p := recsys.Params{K: 50, L1: 1, L2: 10, Cache: cache, Options: &Options{Validation: val, Lambda: 1e-2, MemoryBudget: c.budget}}
				if err := m.Fit(context.Background(), train, p); err != nil {
					b.Fatal(err)
				}
				info := m.(*Model).Info()
				b.ReportMetric(float64(info.Iterations), "iters")
				b.ReportMetric(float64(info.MemoBytes)/(1<<20), "memo-MiB")
				b.ReportMetric(float64(info.Candidates), "pairs")
			}
		})
	}
}

// BenchmarkFEBRScore scores one user's live history and takes the top 10,
// as a recommendation request does.
func BenchmarkFEBRScore(b *testing.B) {
	x := benchMatrix(b)
	for _, c := range []struct {
		name   string
		budget int64
	}{{"febr-i-slim", 0}, {"febr-iu-kunn", 0}, {"febr-i-slim", -1}, {"febr-iu-kunn", -1}} {
		name := c.name
		label := name
		if c.budget < 0 {
			label += "/streaming" // no memo: the path of 10⁶ events and more
		}
		b.Run(label, func(b *testing.B) {
			m, _ := recsys.New(name)
			if err := m.Fit(context.Background(), x, recsys.Params{K: 50, L1: 1, L2: 10, Options: &Options{Iterations: 20_000}}); err != nil {
				b.Fatal(err)
			}
			scoreUsers(b, m, x)
		})
	}
}

// BenchmarkFEBRValidation is one validation pass of a streaming FEBR
// search (no training memo, as at 10⁶ events and more), on a catalogue of
// MovieLens-20M's width (27k items) with k = 200: "extract" extracts and
// ranks every validation user's block, as the baseline of a k does and as
// every evaluation of OPT-ADG did before the memo of validation blocks;
// "memo" ranks the users whose blocks the first pass kept, as OPT-ADG's
// later evaluations do (memo-MiB: what it keeps, at most 1 GiB).
func BenchmarkFEBRValidation(b *testing.B) {
	x := generated(b, 7, 4000, 27000, 140)
	train, val := holdOut(b, x, 0.1, 1)
	for _, name := range []string{"febr-i-cosine", "febr-iu-cosine"} {
		v, _ := variantOf(name)
		p := recsys.Params{K: 200, Cache: recsys.NewNeighbourCache(train, 200)}.WithDefaults()
		for _, memo := range []bool{false, true} {
			label := name + "/extract"
			if memo {
				label = name + "/memo"
			}
			b.Run(label, func(b *testing.B) {
				data, err := prepare(context.Background(), train, v, p, Options{MemoryBudget: -1}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				theta := data.full.ext.initialTheta()
				if _, _, err := data.full.validationPass(context.Background(), theta, val, memo, false, nil); err != nil {
					b.Fatal(err)
				}
				kept := 0
				for u := range val {
					if memo && len(val[u]) > 0 && data.full.valMemo[u] != nil {
						kept++
					}
				}
				b.ResetTimer()
				for b.Loop() {
					if _, _, err := data.full.validationPass(context.Background(), theta, val, false, memo, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(data.full.valBytes)/(1<<20), "memo-MiB")
				b.ReportMetric(float64(kept), "kept-users")
			})
		}
	}
}

// BenchmarkBlendStackADG is one call of the blend's held-out ADG estimate,
// hundreds of which make its direct search (ascend): 2,000 users, each
// with ~1,000 sampled negatives and its held-out positives, 7 bases.
func BenchmarkBlendStackADG(b *testing.B) {
	x := generated(b, 31, 2000, 3000, 60)
	ctx := context.Background()
	ho, err := newHoldout(x, 0.5, 1, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	bases := make([]recsys.Model, 7)
	for k := range bases {
		bases[k] = &noiseModel{n: x.Items(), stream: uint64(k)}
	}
	st, err := blendStackOf(ctx, ho, bases, DefaultBlendNegatives, 1)
	if err != nil {
		b.Fatal(err)
	}
	theta := []float64{1, 0.5, 0.25, -0.1, 0.3, 0.2, 0.1}
	st.seen = nil // every call computes
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := st.adgSum(ctx, theta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOptADGStreaming is 20,000 OPT-ADG iterations of febr-u-cosine
// without the memo (the path of 10⁶ events and more): each drawn user's
// view (KNN(u) and the user side of the items the step looks at), then
// the serial steps. 4,000 users, 27,000 items, ~140 positives a user, as
// MovieLens-20M's catalogue and history lengths.
func BenchmarkOptADGStreaming(b *testing.B) {
	x := generated(b, 7, 4000, 27000, 140)
	v, _ := variantOf("febr-u-cosine")
	p := recsys.Params{K: 200, Cache: recsys.NewNeighbourCache(x, 200), Options: &Options{MemoryBudget: -1, Iterations: 20_000, Seed: 3}}.WithDefaults()
	o, err := optionsOf(p)
	if err != nil {
		b.Fatal(err)
	}
	data, err := prepare(context.Background(), x, v, p, o, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	theta0 := data.train.ext.initialTheta()
	// The first run fills the KNN(u) memo, as the first λ of a search does.
	if _, err := data.train.optADG(context.Background(), theta0, o.optConfig(nil), nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := data.train.optADG(context.Background(), theta0, o.optConfig(nil), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDenseTopN20M answers top-10 requests as the server does for a
// model without RankTop (recommendFrom): score every item, set the user's
// own to −Inf, select with TopN, at the item count of `recsys scale`'s 20M
// database (20,000 Zipf users × 143 items over 27,000 items). "blend" is
// febr-blend with rp3beta alone (what auto mode learnt on that data),
// "blend2" with itemknn added; "select" is TopN alone on blend scores.
func BenchmarkDenseTopN20M(b *testing.B) {
	x := drawn(b, 20000, 27000, func(add func(u, i uint32)) { synth.Zipf(48, 20000, 27000, 143, add) })
	pop := x.Popularity()
	rp, knn := fitted(b, "rp3beta", x, recsys.Params{K: 100}), fitted(b, "itemknn", x, recsys.Params{K: 200})
	one, two := &Blend{}, &Blend{}
	one.set([]string{"rp3beta"}, []recsys.Model{rp}, make([]recsys.Params, 1), []float64{1}, x.Items())
	two.set([]string{"rp3beta", "itemknn"}, []recsys.Model{rp, knn}, make([]recsys.Params, 2), []float64{1, 0.5}, x.Items())
	scores := make([]float64, x.Items())
	answer := func(m recsys.Model, h []uint32) []uint32 {
		m.Score(h, scores)
		for _, i := range h {
			scores[i] = math.Inf(-1)
		}
		return recsys.TopN(scores, pop, nil, 10)
	}
	for _, c := range []struct {
		name string
		m    recsys.Model
	}{{"rp3beta", rp}, {"blend", one}, {"blend2", two}} {
		b.Run(c.name, func(b *testing.B) {
			u := 0
			for b.Loop() {
				answer(c.m, x.Row(u%x.Users()))
				u++
			}
		})
	}
	all := make([][]float64, 200)
	for u := range all {
		answer(one, x.Row(u))
		all[u] = slices.Clone(scores)
	}
	b.Run("select", func(b *testing.B) {
		u := 0
		for b.Loop() {
			recsys.TopN(all[u%len(all)], pop, nil, 10)
			u++
		}
	})
}
