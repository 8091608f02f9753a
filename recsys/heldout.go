package recsys

import "context"

// RankHeldOut is the ranking step of every offline measurement (the
// evaluation, the validation of a hyper-parameter search, FEBR's choice of
// its inner SLIM): it scores, in parallel over users, every user with
// held-out items in any of sets (every user when top > 0) from the user's
// training row, and returns for each set the ranks of its items (Def. 4.1,
// among the items not in the user's training row, ties broken by pop) and,
// when top > 0, each user's top-N list with the scores. Each set has an
// entry per user of train.
func RankHeldOut(ctx context.Context, m Model, train *Matrix, pop []uint32, sets [][][]uint32, top int) ([][][]int, [][]Neighbour, error) {
	return RankHeldOutLive(ctx, m, train, nil, pop, sets, top)
}

// RankHeldOutLive is RankHeldOut where a user u with live[u] != nil (live
// may be nil) is scored as a user the model was not fitted on (self −1)
// from the live history live[u], and its items are ranked among those not
// in it: the users protocol of the evaluation, whose held-out users have
// no training row. A model with a decay of past events (Decayer) scores
// a training row with the days train carries (ScoreDecayed); a live
// history has none and scores undecayed.
func RankHeldOutLive(ctx context.Context, m Model, train *Matrix, live [][]uint32, pop []uint32, sets [][][]uint32, top int) ([][][]int, [][]Neighbour, error) {
	nu, ni := train.Users(), train.Items()
	ranks := make([][][]int, len(sets))
	for s := range sets {
		ranks[s] = make([][]int, nu)
	}
	var tops [][]Neighbour
	if top > 0 {
		tops = make([][]Neighbour, nu)
	}
	ranker := NewRanker(pop, ni)
	sparse, _ := m.(SparseScorer)
	decayed := Decays(m) && train.Timed()
	err := ParallelFor(ctx, nu, 16, "", nil, func() func(lo, hi int) {
		scores := make([]float64, ni)
		var touched []uint32
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				need := top > 0
				for _, set := range sets {
					need = need || len(set[u]) > 0
				}
				if !need {
					continue
				}
				history, self, days := train.Row(u), u, train.RowDays(u)
				if live != nil && live[u] != nil {
					history, self, days = live[u], -1, nil
				}
				if decayed && days != nil {
					ScoreDecayed(m, self, history, days, scores)
				} else if sparse != nil && top == 0 {
					var ok bool
					if touched, ok = sparse.ScoreSparse(history, scores, touched); ok {
						// Every item the history does not reach scores 0.
						for s, set := range sets {
							if len(set[u]) > 0 {
								ranks[s][u] = ranker.RanksSparse(scores, touched, history, set[u])
							}
						}
						continue
					}
					ScoreUser(m, self, history, scores)
				} else {
					ScoreUser(m, self, history, scores)
				}
				for s, set := range sets {
					if len(set[u]) > 0 {
						ranks[s][u] = ranker.Ranks(scores, history, set[u])
					}
				}
				if top > 0 {
					best := TopN(scores, pop, history, top)
					list := make([]Neighbour, len(best))
					for k, i := range best {
						list[k] = Neighbour{Index: i, Value: scores[i]}
					}
					tops[u] = list
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return ranks, tops, nil
}
