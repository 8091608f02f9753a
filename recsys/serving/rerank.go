package serving

import (
	"context"
	"slices"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// Rerank answers POST /users/{id}/rerank: the candidates an application
// fetched itself, ordered as the model ranks them for the user's live
// history, with the scores GET /users/{id}/recommendations would give
// them. A repeated id counts once, at its first place; ids not in the
// catalogue and hidden items are left out and listed (UnknownItems,
// HiddenItems); consumed and disliked items are kept, since the caller
// chose them. Cold items (no event of any kind) have no model score: they
// come last, in request order, flagged cold with score 0. A user with no
// positive history (unknown or cold), or no trained model, gets the
// candidates by popularity, flagged as the popularity fallback, as GET
// would answer.
func (e *Engine) Rerank(ctx context.Context, req api.RerankRequest) (*api.Recommendations, error) {
	name, m, err := e.models.Load().pick(req.Model)
	if err != nil {
		return nil, err
	}
	c, err := e.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	prof, err := e.src.Profile(ctx, req.UserID)
	if err != nil {
		return nil, err
	}
	st, err := e.newSteer(ctx, c, req.Steer, req.Explain)
	if err != nil {
		return nil, err
	}
	out := &api.Recommendations{UserID: req.UserID}
	cand := make([]uint32, 0, len(req.Items))
	var unpopular []uint32
	seen := make(map[string]bool, len(req.Items))
	for _, id := range req.Items {
		if seen[id] {
			continue
		}
		seen[id] = true
		i, ok := c.cat.Index[id]
		switch {
		case !ok || int(i) >= len(c.cat.ItemIDs) || c.cat.ItemIDs[i] == "":
			out.UnknownItems = append(out.UnknownItems, id)
		case c.cat.Hidden[i]:
			out.HiddenItems = append(out.HiddenItems, id)
		case !st.keep(i):
			out.FilteredItems = append(out.FilteredItems, id)
		default:
			cand = append(cand, i)
			if c.cat.Popularity[i] == 0 {
				unpopular = append(unpopular, i)
			}
		}
	}
	interacted, err := e.src.ItemsInteracted(ctx, unpopular)
	if err != nil {
		return nil, err
	}
	var cold []uint32
	isCold := map[uint32]bool{}
	for k, i := range unpopular {
		if !interacted[k] {
			cold = append(cold, i)
			isCold[i] = true
		}
	}
	warm := slices.DeleteFunc(cand, func(i uint32) bool { return isCold[i] })

	bufp := scoreBuffers.Get().(*[]float64)
	defer scoreBuffers.Put(bufp)
	n := len(c.cat.ItemIDs)
	if cap(*bufp) < n {
		*bufp = make([]float64, n)
	}
	scores := (*bufp)[:n]
	var ranker *Served // the model that scored, nil for popularity
	if m != nil && len(prof.Positive) > 0 {
		ranker = m
		out.Model, out.ModelVersion = m.Info.Name, m.Info.Version
		recsys.ScoreDecayed(m.Model.(recsys.Model), -1, prof.Positive, prof.PositiveDays, scores)
	} else {
		out.Model, out.Fallback = recsys.PopularModel, recsys.PopularModel
		if name == recsys.PopularModel {
			out.Fallback = ""
			if m != nil {
				out.ModelVersion = m.Info.Version
			}
		}
		for _, i := range warm {
			scores[i] = float64(c.cat.Popularity[i])
		}
	}
	recsys.SortRanked(warm, scores, c.pop32)
	list := make([]Candidate, 0, len(warm)+len(cold))
	for _, i := range warm {
		list = append(list, Candidate{Item: i, Score: scores[i]})
	}
	for _, i := range cold {
		list = append(list, Candidate{Item: i})
	}
	list = st.apply(list)
	if req.Diversity.On() {
		if list, err = e.rerankDiversified(ctx, c, ranker, req.Diversity, list, len(warm)); err != nil {
			return nil, err
		}
	}
	out.Items = make([]api.ScoredItem, 0, len(list))
	for _, x := range list {
		if isCold[x.Item] {
			out.Items = append(out.Items, api.ScoredItem{ItemID: c.cat.ItemIDs[x.Item], Cold: true})
		} else {
			out.Items = append(out.Items, api.ScoredItem{ItemID: c.cat.ItemIDs[x.Item], Score: x.Score})
		}
	}
	if req.Explain {
		withRules(c, out.Items, st)
	}
	return out, nil
}

// rerankDiversified diversifies the ranked candidates of a rerank, the
// first warm of them ranked by model m (by popularity when m is nil),
// the cold ones after them: MMR reorders only the warm ones, which
// have scores to compare; the cap, every one. Nothing is left out but
// what the cap leaves out.
func (e *Engine) rerankDiversified(ctx context.Context, c *catalogueCache, m *Served, d api.Diversity, list []Candidate, warm int) ([]Candidate, error) {
	var sim func([]Candidate) func(a, b int) float64
	if d.Lambda != nil && warm > 0 {
		var err error
		if sim, err = e.similarityOf(ctx, c, m); err != nil {
			return nil, err
		}
	}
	o := diversifyOptions(c, d, len(list), sim)
	o.MMR = o.MMR && warm > 0
	o.Pool = min(DiversityPool, warm)
	return Diversify(list, o), nil
}
