package recsys

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"recsys/recsys/dataset"
)

func diagSplit(t *testing.T) (*Matrix, [][]uint32) {
	pos, err := dataset.Positives(os.Getenv("FEBR_FORMAT"), "../../shared/datasets/"+os.Getenv("FEBR_DATA"), nil)
	if err != nil {
		t.Fatal(err)
	}
	nu, ni := len(pos.UserIDs), len(pos.ItemIDs)
	rows := make([][]uint32, nu)
	for k := range pos.Users {
		rows[pos.Users[k]] = append(rows[pos.Users[k]], pos.Items[k])
	}
	rng := rand.New(rand.NewPCG(1, 0))
	val := make([][]uint32, nu)
	var train []Pair
	for u, r := range rows {
		slices.Sort(r)
		r = slices.Compact(r)
		rng.Shuffle(len(r), func(a, b int) { r[a], r[b] = r[b], r[a] })
		h := 0
		if len(r) >= 5 {
			h = max(1, len(r)*3/10)
		}
		val[u] = slices.Sorted(slices.Values(r[:h]))
		for _, i := range r[h:] {
			train = append(train, Pair{uint32(u), i})
		}
	}
	x, err := NewMatrix(nu, ni, train)
	if err != nil {
		t.Fatal(err)
	}
	return x, val
}

func envF(k string, d float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(k), 64); err == nil {
		return v
	}
	return d
}

func TestFEBRDiag(t *testing.T) {
	if os.Getenv("FEBR_DIAG") == "" {
		t.Skip()
	}
	x, val := diagSplit(t)
	ctx := context.Background()
	v, _ := febrVariantOf(os.Getenv("FEBR_V"))
	p := Params{K: int(envF("FEBR_K", 50)), L1: envF("FEBR_L1", 1), L2: envF("FEBR_L2", 10)}.withDefaults()
	o := FEBROptions{MemoryBudget: 1 << 30, Validation: val, Lambda: envF("FEBR_LAMBDA", 1e-3), Holdout: envF("FEBR_HOLD", 0)}
	o = Params{FEBR: &o}.febrOptions()
	var ho *febrHoldout
	if o.Holdout > 0 {
		ho, _ = newFEBRHoldout(x, o.Holdout, 0, nil)
	}
	data, err := prepareFEBR(ctx, x, v, p, o, nil, ho)
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.optConfig(nil)
	cfg.eta = envF("FEBR_ETA", cfg.eta)
	cfg.gamma = envF("FEBR_GAMMA", cfg.gamma)
	cfg.patience = int(envF("FEBR_PAT", 5))
	cfg.trace = func(it int, th []float64, adg float64) {
		tr := ""
		if os.Getenv("FEBR_TRAIN") != "" {
			tr = fmt.Sprintf(" train=%.4f", trainingADG(data.train, th))
		}
		fmt.Printf("it=%d val=%.4f%s θ=%.3f\n", it, adg, tr, th)
	}
	if _, err := data.train.optADG(ctx, data.full.ext.initialTheta(), cfg, data.full); err != nil {
		t.Fatal(err)
	}
}

func TestFEBRDiagService(t *testing.T) {
	if os.Getenv("FEBR_DIAG") == "" {
		t.Skip()
	}
	x, val := diagSplit(t)
	ctx := context.Background()
	cache := NewNeighbourCache(x, 200)
	g := FEBRGrid{K: []int{10, 20, 50, 100, 200}, Lambda: []float64{1e-3, 1e-2}, SLIM: [][2]float64{{1, 1}, {0.1, 1}}, KByBaseline: true}
	best, trials, err := SearchFEBR(ctx, "febr", x, g, Params{Cache: cache, FEBR: &FEBROptions{Validation: val}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		fmt.Printf("%+v\n", tr)
	}
	fmt.Printf("%+v\n", best.Info())
}
