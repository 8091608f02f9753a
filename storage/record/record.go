// Package record is what the two stores of recsys keep alike, so that the
// bbolt store (storage) and the PostgreSQL store (storage/postgres) give
// the same answer to every read: the user and pair records and the fold of
// an event into them, the relevance flags, the policy's verdicts on a
// batch, the counter day of a time, the natural order of ids, the listing
// cursors, the sealed model blob, the dense feature vectors and the rules
// of online measurement. Each store lays the records out in its own way;
// this package says what they hold and how events change them.
package record

import (
	"errors"
	"fmt"

	"github.com/recsys-engine/recsys/api"
)

// User is what a user record counts.
type User struct {
	Created, LastSeen        int64 // Unix ns
	Items, Positives, Events int64
}

// API is the API view of the record of user id.
func (u User) API(id string) api.User {
	return api.User{ID: id, CreatedAt: FromNano(u.Created), LastSeen: FromNano(u.LastSeen),
		Items: u.Items, Positives: u.Positives, Events: u.Events}
}

// Pair is a (user, item) pair record.
type Pair struct {
	Count, First, Last int64 // events; first and latest time (Unix ns)
	Value              float64
	Flags              byte // FlagReached, FlagNegative, FlagHasValue
	LastType           string
}

// Pair flags, as both stores keep them.
const (
	FlagReached  = 1 << 0 // some positive event reached its type's threshold
	FlagNegative = 1 << 1 // the latest relevance-changing event was negative
	FlagHasValue = 1 << 2
)

// Relevant is X(u,i) = 1 for a pair with these flags: reached and not
// overridden by a negative event.
func Relevant(flags byte) bool { return flags&FlagReached != 0 && flags&FlagNegative == 0 }

// API is the API view of the pair with item itemID.
func (p Pair) API(itemID string) api.HistoryEntry {
	return api.HistoryEntry{ItemID: itemID, LastType: p.LastType, Count: p.Count, Value: p.Value,
		HasValue: p.Flags&FlagHasValue != 0, FirstSeen: FromNano(p.First), LastSeen: FromNano(p.Last),
		Positive: Relevant(p.Flags), Negative: p.Flags&FlagNegative != 0}
}

// Event is one event as it folds into its pair: its time (the server's
// when it came without one) and the relevance policy's verdict.
type Event struct {
	TS                 int64
	Type               string
	Value              float64
	HasValue           bool
	Positive, Negative bool
}

// Fold applies one event to the pair p of user u; fresh means p has no
// event yet. It returns the change of the pair's relevance (−1, 0 or +1).
// Both stores' ingest and the bbolt bulk loader fold through it, so the
// records they store are the same.
func Fold(u *User, p *Pair, fresh bool, e Event) (dRelevant int64) {
	if fresh {
		p.First = e.TS
		u.Items++
	}
	wasRelevant := !fresh && Relevant(p.Flags)
	p.Count++
	if e.TS >= p.Last {
		p.Last, p.LastType = e.TS, e.Type
		p.Flags &^= FlagHasValue
		p.Value = 0
		if e.HasValue {
			p.Value = e.Value
			p.Flags |= FlagHasValue
		}
	}
	switch {
	case e.Negative:
		p.Flags |= FlagNegative
	case e.Positive:
		p.Flags |= FlagReached
		p.Flags &^= FlagNegative
	}
	if isRelevant := Relevant(p.Flags); isRelevant != wasRelevant {
		dRelevant = 1
		if !isRelevant {
			dRelevant = -1
		}
		u.Positives += dRelevant
	}
	u.Events++
	if e.TS > u.LastSeen {
		u.LastSeen = e.TS
	}
	return dRelevant
}

// Verdict is the relevance policy's judgement of one event.
type Verdict struct{ Positive, Negative bool }

// Judge applies the policy to every event of a batch before anything is
// stored; an invalid event fails the whole batch, its field named by its
// place in the batch.
func Judge(p api.Policy, evs []api.Interaction) ([]Verdict, error) {
	out := make([]Verdict, len(evs))
	for k, ev := range evs {
		pos, neg, err := p.Judge(ev)
		if err != nil {
			var fe *api.Error
			if len(evs) > 1 && errors.As(err, &fe) && len(fe.Details) == 1 {
				err = api.FieldError(fmt.Sprintf("interactions[%d].%s", k, fe.Details[0].Field), fe.Details[0].Problem)
			}
			return nil, err
		}
		out[k] = Verdict{pos, neg}
	}
	return out, nil
}
