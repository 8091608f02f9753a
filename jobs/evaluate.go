package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
)

// SubmitEvaluation queues an offline evaluation of the stored data. Only
// recommenders can be evaluated (the protocol ranks items for users); a
// request that names none evaluates the recommenders among the server's
// models.
func (s *Scheduler) SubmitEvaluation(ctx context.Context, req api.EvaluationRequest) (api.Job, error) {
	if len(req.Models) == 0 {
		req.Models = slices.DeleteFunc(slices.Clone(s.opts.Models), func(n string) bool { return !recsys.Recommends(n) })
		if len(req.Models) == 0 {
			return api.Job{}, api.FieldError("models", fmt.Sprintf("the server's models (%s) include no recommender to evaluate; name some of: %s",
				strings.Join(s.opts.Models, ", "), strings.Join(recsys.Names(), ", ")))
		}
	}
	if err := checkModelNames(req.Models, recsys.Names(), "evaluated"); err != nil {
		return api.Job{}, err
	}
	if req.Protocol == "" {
		req.Protocol = eval.Standard
	}
	if req.Folds == 0 {
		req.Folds = 3
		if req.Protocol == eval.Time {
			req.Folds = 1
		}
	}
	if m := eval.MaxFolds(req.Protocol); m > 0 && req.Folds > m {
		return api.Job{}, api.FieldError("folds", fmt.Sprintf("the %s protocol has at most %d folds, not %d", req.Protocol, m, req.Folds))
	}
	if req.Seed == 0 {
		req.Seed = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(ctx, api.Job{Kind: api.JobEvaluate, Models: req.Models, Trigger: "api",
		Protocol: req.Protocol, Folds: req.Folds, Seed: req.Seed}, false)
}

func (s *Scheduler) runEvaluation(ctx context.Context, j *api.Job, rec *recorder) error {
	rec.stage("snapshot", 0)
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return err
	}
	if len(snap.Users) == 0 {
		return api.Errorf(api.CodeConflict, "there are no relevant interactions to evaluate on")
	}
	d := &eval.Dataset{Name: "stored data", UserIDs: snap.UserIDs, ItemIDs: snap.ItemIDs, Users: snap.Users, Items: snap.Items, Days: snap.Days}
	if j.Protocol == eval.Time {
		rec.stage("event times", 0.02)
		if d.Times, err = pairTimes(ctx, s.st, snap); err != nil {
			return err
		}
	}
	rec.stage("evaluate", 0.05)
	report, err := eval.Run(ctx, d, eval.Options{Models: j.Models, Folds: j.Folds, Protocol: j.Protocol, Seed: j.Seed,
		Progress: func(stage string, done, total int) {
			if total > 0 {
				rec.progress(stage, 0.05+0.9*float64(done)/float64(total))
			}
		}})
	if err != nil {
		return err
	}
	report.Kind = "recommendation"
	rec.stage("store report", 0.95)
	if err := s.st.PutReport(context.WithoutCancel(ctx), report); err != nil {
		return err
	}
	j.ReportID = report.ID
	return nil
}

// historyReader is the part of a store the time protocol reads the event
// times from: a snapshot carries the positive pairs without them.
type historyReader interface {
	History(ctx context.Context, userID string, p api.Page) ([]api.HistoryEntry, string, error)
}

// pairTimes is, for every positive pair of snap, the Unix time of its first
// event (api.HistoryEntry.FirstSeen), read from each user's history.
func pairTimes(ctx context.Context, st Store, snap *api.Snapshot) ([]int64, error) {
	h, ok := st.(historyReader)
	if !ok {
		return nil, api.Errorf(api.CodeConflict, "the store keeps no event times for the time protocol")
	}
	byUser := map[uint32][]int{}
	for k, u := range snap.Users {
		byUser[u] = append(byUser[u], k)
	}
	times := make([]int64, len(snap.Users))
	for u, pairs := range byUser {
		first := map[string]time.Time{}
		for cursor := ""; ; {
			entries, next, err := h.History(ctx, snap.UserIDs[u], api.Page{Cursor: cursor, Limit: 1000})
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				first[e.ItemID] = e.FirstSeen
			}
			if next == "" {
				break
			}
			cursor = next
		}
		for _, k := range pairs {
			item := snap.ItemIDs[snap.Items[k]]
			at, ok := first[item]
			if !ok || at.IsZero() {
				return nil, api.Errorf(api.CodeConflict, "no event time for user %q and item %q (the data changed during the evaluation?)", snap.UserIDs[u], item)
			}
			times[k] = at.Unix()
		}
	}
	return times, nil
}
