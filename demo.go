package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// demoGenres are the genre-like features of the demo catalogue.
var demoGenres = []string{"action", "comedy", "drama", "documentary", "family", "horror", "romance", "scifi"}

// Demo data sizes and seed: the same seed always gives the same data.
const (
	demoSeed     = 42
	demoItems    = 600
	demoUsers    = 400
	demoClusters = 5
	demoPerUser  = 40
)

// fillDemo fills an empty store with a generated catalogue and interactions:
// power-law item popularity, a few taste clusters that prefer some genres,
// genre flags as features and categories. It does nothing to a store that
// already holds data.
func fillDemo(ctx context.Context, st backend.Store, log *slog.Logger) error {
	c, err := st.Counts(ctx)
	if err != nil {
		return err
	}
	if c.Items > 0 || c.Events > 0 {
		log.Info("demo: the database is not empty; leaving it as it is")
		return nil
	}
	rng := rand.New(rand.NewPCG(demoSeed, 0))
	items, genresOf := demoCatalogue(rng)
	if err := st.PutItems(ctx, items); err != nil {
		return err
	}
	// Cluster c likes genres c and c+3 (mod 8) three times as much.
	weights := make([][]float64, demoClusters)
	for cl := range weights {
		weights[cl] = make([]float64, demoItems)
		for i := range weights[cl] {
			w := 1 / math.Pow(float64(i+1), 0.8) // Zipf-like popularity by item rank
			for _, g := range genresOf[i] {
				if g == cl%len(demoGenres) || g == (cl+3)%len(demoGenres) {
					w *= 3
				}
			}
			weights[cl][i] = w
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var evs []api.Interaction
	for u := 0; u < demoUsers; u++ {
		cl := u % demoClusters
		n := demoPerUser/2 + rng.IntN(demoPerUser)
		for _, i := range sampleWithout(rng, weights[cl], n) {
			typ := "view"
			if rng.Float64() < 0.2 {
				typ = "purchase"
			}
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: items[i].ID, Type: typ,
				Timestamp: start.Add(time.Duration(rng.IntN(300*24)) * time.Hour)})
		}
	}
	for k := 0; k < len(evs); k += api.MaxBatch {
		end := min(k+api.MaxBatch, len(evs))
		if _, err := st.AddInteractions(ctx, evs[k:end]); err != nil {
			return err
		}
	}
	log.Info("demo: generated data", "items", len(items), "users", demoUsers, "events", len(evs))
	return nil
}

func demoCatalogue(rng *rand.Rand) ([]api.Item, [][]int) {
	items := make([]api.Item, demoItems)
	genresOf := make([][]int, demoItems)
	for i := range items {
		g1 := rng.IntN(len(demoGenres))
		gs := []int{g1}
		if rng.Float64() < 0.5 {
			if g2 := rng.IntN(len(demoGenres)); g2 != g1 {
				gs = append(gs, g2)
			}
		}
		genresOf[i] = gs
		feats := make(map[string]float64, len(demoGenres))
		for _, name := range demoGenres {
			feats[name] = 0
		}
		var cats []string
		for _, g := range gs {
			feats[demoGenres[g]] = 1
			cats = append(cats, demoGenres[g])
		}
		items[i] = api.Item{ID: fmt.Sprintf("m%d", i), Features: feats, Categories: cats,
			Labels: map[string]string{"title": fmt.Sprintf("Demo %s title %d", demoGenres[g1], i)}}
	}
	return items, genresOf
}

// sampleWithout draws n distinct indices with probability proportional to w.
func sampleWithout(rng *rand.Rand, w []float64, n int) []int {
	w = append([]float64(nil), w...)
	total := 0.0
	for _, x := range w {
		total += x
	}
	out := make([]int, 0, n)
	for len(out) < n && total > 1e-12 {
		r := rng.Float64() * total
		i := 0
		for ; i < len(w)-1 && r >= w[i]; i++ {
			r -= w[i]
		}
		if w[i] == 0 {
			continue
		}
		out = append(out, i)
		total -= w[i]
		w[i] = 0
	}
	return out
}
