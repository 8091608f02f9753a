package serving

import (
	"context"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// reasonsPerItem is how many reasons explain=true attaches to an item.
const reasonsPerItem = 3

// explain attaches to each item the largest terms of its score: consumed
// items (item side) and neighbour users (user side).
func (e *Engine) explain(ctx context.Context, c *catalogueCache, m *Served, prof api.Profile, items []api.ScoredItem) error {
	ex, ok := m.Model.(recsys.Explainer)
	if !ok {
		return nil
	}
	idx := make([]uint32, len(items))
	for k, it := range items {
		idx[k] = c.cat.Index[it.ItemID]
	}
	terms := ex.Explain(prof.Positive, idx, reasonsPerItem)
	var users []uint32
	for _, ts := range terms {
		for _, t := range ts {
			if t.User {
				users = append(users, t.Index)
			}
		}
	}
	userIDs, err := e.src.UserIDs(ctx, users)
	if err != nil {
		return err
	}
	for k, ts := range terms {
		for _, t := range ts {
			r := api.Reason{Kind: "item", Weight: t.Weight}
			if t.User {
				r.Kind, r.ID, userIDs = "user", userIDs[0], userIDs[1:]
			} else if int(t.Index) < len(c.cat.ItemIDs) {
				r.ID = c.cat.ItemIDs[t.Index]
			}
			if r.ID != "" {
				items[k].Reasons = append(items[k].Reasons, r)
			}
		}
	}
	return nil
}
