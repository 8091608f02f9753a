// Package dump is the format of a store's whole content as a stream of
// records in one fixed order, the same from either store (the bbolt store,
// storage, and the PostgreSQL store, storage/postgres): what `recsys
// migrate` copies, counts and checksums. Indices, times, counters and
// sequences are copied as they are, so the copy answers every read as the
// original does and its models still match its indices.
package dump

import (
	"context"
	"errors"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// User is a user record.
type User struct {
	Idx uint64
	ID  string
	T   record.User
}

// Item is an item record with its popularity.
type Item struct {
	Idx                        uint64
	ID                         string
	Features                   map[string]float64 `json:",omitempty"`
	Categories                 []string           `json:",omitempty"`
	Labels                     map[string]string  `json:",omitempty"`
	Hidden                     bool
	Created, Updated, Positive int64
}

// Pair is a pair record.
type Pair struct {
	User, Item uint64
	P          record.Pair
}

// PairDay is the events of a pair on a day other than its first.
type PairDay struct {
	User, Item uint64
	Day        string // YYYYMMDD
	Events     int64
}

// Day is a per-day event counter.
type Day struct {
	Day    string // YYYYMMDD
	Events int64
}

// Model is a model version: its record and its sealed blob (record.Seal).
type Model struct {
	Info   api.ModelInfo
	Sealed []byte
}

// Head is what precedes the records: the counters (CounterNames), the
// sequences (SeqNames: the last number given out) and the active model.
type Head struct {
	Counters map[string]int64
	Active   string
}

// Attribution is what was credited to one shown item: position Position
// of the list RecommendationID, with record.AttrClick and
// record.AttrConversion flags.
type Attribution struct {
	RecommendationID string
	Position         int
	Flags            byte
}

// Experiment is an experiment and whether it is the one running (the one
// that assigns users).
type Experiment struct {
	Experiment api.Experiment
	Running    bool
}

// Sink takes a dump: Head first, then users by index, items by index,
// pairs by (user, item), pair days by (user, item, day), days, models by
// (name, version), jobs and reports by id, then the online records:
// impressions by recommendation id (which is time order), attributions by
// (id, position), online counters by (day, model, experiment, arm,
// placement) and experiments by id; last the rules and the placements by
// name.
type Sink interface {
	Head(Head) error
	User(User) error
	Item(Item) error
	Pair(Pair) error
	PairDay(PairDay) error
	Day(Day) error
	Model(Model) error
	Job(api.Job) error
	Report(api.Report) error
	Impression(api.Impression) error
	Attribution(Attribution) error
	OnlineCount(api.OnlineCount) error
	Experiment(Experiment) error
	Rule(api.Rule) error
	Placement(api.Placement) error
}

// Dumper is a store that can write out and take in a whole dump.
type Dumper interface {
	// Dump writes everything to sink from one consistent read.
	Dump(ctx context.Context, sink Sink) error
	// Restore fills the store, which must hold nothing (ErrNotEmpty), with
	// the dump fill writes to the sink it is given, in one transaction:
	// all of it or, when fill or a write fails, none.
	Restore(ctx context.Context, fill func(Sink) error) error
}

// ErrNotEmpty is the answer of a store asked to take in a whole database
// (a restore, or the bbolt store's bulk load) while it holds data; it
// touches neither the store nor the source then.
var ErrNotEmpty = errors.New("the database already holds data")

// SeqNames are the sequences of a dump head.
var SeqNames = []string{"user_seq", "item_seq", "model_seq", "job_seq", "report_seq", "experiment_seq"}

// CounterNames are the counters of a dump head, by the names both stores
// keep them under.
var CounterNames = []string{"users", "items", "pairs", "positives", "events"}

// Kinds are the kinds of record of a dump after its head, in dump order:
// what Sum counts.
var Kinds = []string{"users", "items", "pairs", "pair_days", "days", "models", "jobs", "reports",
	"impressions", "attributions", "online_counts", "experiments", "rules", "placements"}
