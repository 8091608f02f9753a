package serving

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/recsys-engine/recsys/api"
)

// hybridDepth is how deep into each source's neighbour list by=hybrid
// looks. It is fixed, not derived from n, so that the merged ranking is
// the same for every n and each answer is a prefix of any longer one; a
// hybrid list therefore holds at most the items of two such lists.
const hybridDepth = 200

// hybridSimilar merges the collaborative and content neighbours, each taken
// to hybridDepth. Scores of the two sources are on unrelated scales, so
// each source votes with its rank instead: an item r places below the top
// of a list (r = how many items that list scores strictly higher, so tied
// items get the same vote) gets 1 − r/hybridDepth from it, 0 from a list
// that lacks it, and its score is the mean vote of the sources that
// answered. Equal scores are broken as every ranking here: by popularity,
// then by dense index (recsys.TopN).
func (e *Engine) hybridSimilar(ctx context.Context, c *catalogueCache, idx uint32, req api.SimilarRequest) (*api.SimilarItems, error) {
	collab, errC := e.collaborativeSimilar(c, idx, api.SimilarRequest{ItemID: req.ItemID, N: hybridDepth, By: "collaborative"})
	cont, cm, errT := e.contentSimilar(ctx, c, idx, hybridDepth)
	if errC != nil && errT != nil {
		return nil, errT
	}
	votes := map[string]float64{}
	sources := 0.0
	vote := func(items []api.ScoredItem) {
		sources++
		r := 0
		for k, it := range items {
			if k > 0 && it.Score != items[k-1].Score {
				r = k
			}
			votes[it.ItemID] += 1 - float64(r)/hybridDepth
		}
	}
	out := &api.SimilarItems{ItemID: req.ItemID, By: "hybrid", Items: []api.ScoredItem{}}
	if errC == nil {
		vote(collab.Items)
		out.Model, out.ModelVersion = collab.Model, collab.ModelVersion
	}
	if errT == nil {
		vote(cont)
		out.Model += "+" + cm.served.Info.Name
		out.ModelVersion += "+" + cm.served.Info.Version
		out.Model = strings.TrimPrefix(out.Model, "+")
		out.ModelVersion = strings.TrimPrefix(out.ModelVersion, "+")
	}
	for id, v := range votes {
		out.Items = append(out.Items, api.ScoredItem{ItemID: id, Score: v / sources})
	}
	slices.SortFunc(out.Items, func(a, b api.ScoredItem) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		ia, ib := c.cat.Index[a.ItemID], c.cat.Index[b.ItemID]
		if pa, pb := c.cat.Popularity[ia], c.cat.Popularity[ib]; pa != pb {
			return cmp.Compare(pb, pa)
		}
		return cmp.Compare(ia, ib)
	})
	out.Items = out.Items[:min(req.N, len(out.Items))]
	return out, nil
}
