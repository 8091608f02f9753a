package serving

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// CostOptions configure a CostProbe; zero fields take the defaults.
type CostOptions struct {
	// Requests is how many requests are timed per model
	// (DefaultCostRequests), also the size of the user sample.
	Requests int
	// MaxCPU stops a model's timing early once its requests took this much
	// CPU time in all (DefaultCostMaxCPU), so that a slow model cannot
	// hold a training job up for long.
	MaxCPU time.Duration
	// Seed draws the user sample; the same seed and snapshot give the
	// same users in the same order.
	Seed uint64
}

// Defaults of CostOptions, and the request every probe sends: n = 10 with
// the filters a GET /users/{id}/recommendations applies by default.
const (
	DefaultCostRequests = 1000
	DefaultCostMaxCPU   = 2 * time.Second
	costN               = 10
	costWarmup          = 10
)

// CostProbe measures what a recommendation request to a trained model
// costs (api.ServingCost): it sends the engine's Recommend, the model
// asked by name, for a fixed sample of the snapshot's users with a
// positive pair, and times each request in CPU time of the calling
// thread.
//
// The requests go through a throwaway Engine of their own over the
// snapshot, not through the serving engine: the model is served by the
// exact code of a request (the model picked by name, the user's profile,
// RankTop or Score with the filters, the top n), but with the user's
// profile read from memory, so that the figure is the model's share of a
// request and not the store's, which every model pays alike and the load
// tests measure; and the served engine's requests neither wait on the
// probe nor get counted in its ranking metric. There are no cold slots:
// they cost the same whichever model ranks the list.
//
// CPU time of the locked thread rather than wall time, because a
// training job measures on a machine that also serves: wall time would
// count the other threads' work that the scheduler interleaves, where the
// thread's CPU time counts only the request's own, and a request runs on
// one goroutine (no model's scoring starts others). Garbage collection
// work that the request is made to assist is counted, as it is part of
// what the request costs; the collector's background marking is not.
type CostProbe struct {
	eng   *Engine
	users []string
	opts  CostOptions
}

// NewCostProbe returns a probe over snap, whose matrix of positive pairs
// is x, sampling its users with o.Seed.
func NewCostProbe(snap *api.Snapshot, x *recsys.Matrix, o CostOptions) *CostProbe {
	if o.Requests <= 0 {
		o.Requests = DefaultCostRequests
	}
	if o.MaxCPU <= 0 {
		o.MaxCPU = DefaultCostMaxCPU
	}
	var eligible []int
	for u := 0; u < min(x.Users(), len(snap.UserIDs)); u++ {
		if snap.UserIDs[u] != "" && x.UserCount(u) > 0 {
			eligible = append(eligible, u)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x636f7374))
	rng.Shuffle(len(eligible), func(a, b int) { eligible[a], eligible[b] = eligible[b], eligible[a] })
	eligible = eligible[:min(len(eligible), o.Requests)]
	src := &snapshotSource{snap: snap, profiles: make(map[string]api.Profile, len(eligible)),
		popularity: make([]int64, len(snap.ItemIDs))}
	for _, i := range snap.Items {
		if int(i) < len(src.popularity) {
			src.popularity[i]++
		}
	}
	p := &CostProbe{opts: o}
	for _, u := range eligible {
		id := snap.UserIDs[u]
		row := slices.Clone(x.Row(u))
		src.profiles[id] = api.Profile{Known: true, Positive: row, Consumed: row}
		p.users = append(p.users, id)
	}
	p.eng = NewEngine(src, EngineOptions{ColdSlotsPer10: -1})
	return p
}

// Users is the sample of user ids the probe asks for, in request order.
func (p *CostProbe) Users() []string { return p.users }

// Measure times the recommendations of m, a recommender trained on the
// probe's snapshot: opts.Requests requests over the user sample, in turn,
// after a few untimed ones that build the engine's catalogue cache; fewer
// when their CPU time reaches opts.MaxCPU.
func (p *CostProbe) Measure(ctx context.Context, m *Served) (api.ServingCost, error) {
	if len(p.users) == 0 {
		return api.ServingCost{}, errors.New("serving cost: the snapshot has no user with a positive pair")
	}
	p.eng.Install(m, false)
	req := api.RecommendRequest{N: costN, Model: m.Info.Name, ExcludeConsumed: true}
	ask := func(k int) error {
		req.UserID = p.users[k%len(p.users)]
		_, err := p.eng.Recommend(ctx, req)
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for k := range min(costWarmup, len(p.users)) {
		if err := ask(k); err != nil {
			return api.ServingCost{}, err
		}
	}
	times := make([]time.Duration, 0, p.opts.Requests)
	var total time.Duration
	for k := 0; k < p.opts.Requests && total < p.opts.MaxCPU; k++ {
		if k%64 == 0 && ctx.Err() != nil {
			return api.ServingCost{}, ctx.Err()
		}
		start := threadCPU()
		err := ask(k)
		d := threadCPU() - start
		if err != nil {
			return api.ServingCost{}, err
		}
		times = append(times, d)
		total += d
	}
	return costOf(times, total), nil
}

// costOf summarises the times of the requests, total their sum: the mean,
// and p50 and p99 by nearest rank.
func costOf(times []time.Duration, total time.Duration) api.ServingCost {
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rank := func(q float64) time.Duration {
		return times[max(0, int(math.Ceil(q*float64(len(times))))-1)]
	}
	return api.ServingCost{MeanMS: ms(total) / float64(len(times)), P50MS: ms(rank(0.5)), P99MS: ms(rank(0.99)),
		Requests: len(times)}
}

// snapshotSource is the Source of a CostProbe's engine: the catalogue of
// a snapshot, with popularity counted from its positive pairs as the
// store counts it, and the profiles of the sampled users, their positive
// items.
type snapshotSource struct {
	snap       *api.Snapshot
	profiles   map[string]api.Profile
	popularity []int64
}

func (s *snapshotSource) Profile(_ context.Context, userID string) (api.Profile, error) {
	return s.profiles[userID], nil
}

func (s *snapshotSource) Catalogue(context.Context) (*api.Catalogue, error) {
	n := len(s.snap.ItemIDs)
	cat := &api.Catalogue{ItemIDs: s.snap.ItemIDs, Index: make(map[string]uint32, n), Hidden: make([]bool, n),
		Categories: make([][]string, n), Popularity: s.popularity}
	copy(cat.Hidden, s.snap.Hidden)
	copy(cat.Categories, s.snap.Categories)
	for i, id := range s.snap.ItemIDs {
		if id != "" {
			cat.Index[id] = uint32(i)
		}
	}
	return cat, nil
}

// Versions never change: the snapshot is fixed, so the catalogue is built
// once.
func (s *snapshotSource) Versions() (items, events uint64) { return 1, 1 }

func (s *snapshotSource) UserIDs(_ context.Context, idx []uint32) ([]string, error) {
	out := make([]string, len(idx))
	for k, u := range idx {
		if int(u) < len(s.snap.UserIDs) {
			out[k] = s.snap.UserIDs[u]
		}
	}
	return out, nil
}

func (s *snapshotSource) ItemFeatures(context.Context) ([]string, [][]float64, error) {
	return s.snap.FeatureNames, s.snap.Features, nil
}

func (s *snapshotSource) ItemsInteracted(_ context.Context, idx []uint32) ([]bool, error) {
	out := make([]bool, len(idx))
	for k, i := range idx {
		out[k] = int(i) < len(s.popularity) && s.popularity[i] > 0
	}
	return out, nil
}

// ItemAttributes has none: a snapshot keeps no labels or times.
func (s *snapshotSource) ItemAttributes(context.Context) (*api.ItemAttributes, error) {
	return &api.ItemAttributes{}, nil
}
