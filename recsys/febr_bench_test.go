package recsys

import (
	"context"
	"testing"
)

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
			cache := NewNeighbourCache(train, 50)
			if _, err := cache.MaxRow(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				m, _ := New(name)
				p := Params{K: 50, L1: 1, L2: 10, Cache: cache, FEBR: &FEBROptions{Validation: val, Lambda: 1e-2, MemoryBudget: c.budget}}
				if err := m.Fit(context.Background(), train, p); err != nil {
					b.Fatal(err)
				}
				info := m.(*FEBR).Info()
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
			m, _ := New(name)
			if err := m.Fit(context.Background(), x, Params{K: 50, L1: 1, L2: 10, FEBR: &FEBROptions{Iterations: 20_000}}); err != nil {
				b.Fatal(err)
			}
			scoreUsers(b, m, x)
		})
	}
}
