package storage

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"recsys/api"
)

// What the PostgreSQL store (storage/postgres) shares with this one so that
// the two give the same answer to every read: the policy's verdicts on a
// batch, the fold of an event into its pair, the sealed model blob, the
// dense feature vectors and the listing cursors.

// Pair is a (user, item) pair record as the fold sees it.
type Pair struct {
	Count, First, Last int64 // events; first and latest time (Unix ns)
	Value              float64
	Flags              byte // FlagReached, FlagNegative, FlagHasValue
	LastType           string
}

// Pair flags, as stored.
const (
	FlagReached  = flagReached
	FlagNegative = flagNegative
	FlagHasValue = flagHasValue
)

// Relevant is X(u,i) = 1 for a pair with these flags.
func Relevant(flags byte) bool { return relevant(flags) }

// Tally is what a user record counts.
type Tally struct {
	Created, LastSeen        int64 // Unix ns
	Items, Positives, Events int64
}

// Event is one event as it folds into its pair: its time (the server's
// when it came without one) and the policy's verdict.
type Event struct {
	TS                 int64
	Type               string
	Value              float64
	HasValue           bool
	Positive, Negative bool
}

// Fold applies one event to pair p of user u, exactly as this store's
// ingest does; fresh means p has no event yet. It returns the change of the
// pair's relevance (−1, 0 or +1).
func Fold(u *Tally, p *Pair, fresh bool, e Event) (dRelevant int64) {
	ur := userRecord{created: u.Created, lastSeen: u.LastSeen, items: u.Items, positives: u.Positives, events: u.Events}
	pr := pairRecord{count: p.Count, first: p.First, last: p.Last, value: p.Value, flags: p.Flags, lastType: p.LastType}
	dRelevant = fold(&ur, &pr, fresh, pairEvent{ts: e.TS, typ: e.Type, value: e.Value,
		hasValue: e.HasValue, positive: e.Positive, negative: e.Negative})
	*u = Tally{Created: ur.created, LastSeen: ur.lastSeen, Items: ur.items, Positives: ur.positives, Events: ur.events}
	*p = Pair{Count: pr.count, First: pr.first, Last: pr.last, Value: pr.value, Flags: pr.flags, LastType: pr.lastType}
	return dRelevant
}

// HistoryEntry is the API view of a pair with itemID.
func (p Pair) HistoryEntry(itemID string) api.HistoryEntry {
	return pairRecord{count: p.Count, first: p.First, last: p.Last, value: p.Value, flags: p.Flags,
		lastType: p.LastType}.toAPI(itemID)
}

// UserOf is the API view of a user record.
func UserOf(id string, t Tally) api.User {
	return userRecord{created: t.Created, lastSeen: t.LastSeen, items: t.Items, positives: t.Positives,
		events: t.Events}.toAPI(id)
}

// Verdict is the policy's judgement of one event.
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

// DayOf is the per-day counter key (YYYYMMDD, UTC) of a Unix ns time.
func DayOf(ts int64) string { return dayOf(ts) }

// UnixNano is t in Unix ns, 0 for the zero time.
func UnixNano(t time.Time) int64 { return unixNano(t) }

// FromNano is the UTC time of Unix ns n, the zero time for 0.
func FromNano(n int64) time.Time { return fromNano(n) }

// SealBlob prefixes a model blob with a magic and its CRC-32C.
func SealBlob(blob []byte) []byte { return sealBlob(blob) }

// OpenBlob checks and strips SealBlob's seal (ErrCorruptModel on a
// mismatch); a blob without a seal is returned as it is.
func OpenBlob(v []byte) ([]byte, error) { return openBlob(v) }

// DenseFeatures turns per-item feature maps into vectors over the sorted
// union of the feature names.
func DenseFeatures(feats []map[string]float64) ([]string, [][]float64) { return denseFeatures(feats) }

// EncodeIndexCursor and DecodeIndexCursor are the history cursor: the
// dense index of the last item of the page.
func EncodeIndexCursor(idx uint64) string { return encodeIndexCursor(idx) }

// DecodeIndexCursor reads EncodeIndexCursor's cursor; "" is 0.
func DecodeIndexCursor(c string) (uint64, error) { return decodeIndexCursor(c) }

// EncodeIDCursor is the catalogue cursor: the last id of the page.
func EncodeIDCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// DecodeIDCursor reads EncodeIDCursor's cursor.
func DecodeIDCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", api.FieldError("cursor", "is not a cursor this server issued")
	}
	return string(b), nil
}

// KeepVersions is how many versions of one model a store keeps.
const KeepVersions = keepVersions

// Backend is every service a store gives the rest of recsys. The bbolt
// Store and the PostgreSQL store (storage/postgres) both implement it, and
// storage/storagetest checks that they answer alike.
type Backend interface {
	api.InteractionService
	api.UserService
	api.ItemService
	api.StatsService
	api.ModelStore
	api.JobStore
	api.ReportStore
	api.OnlineStore
	Snapshot(ctx context.Context) (*api.Snapshot, error)
	NewModelVersion(ctx context.Context) (string, error)
	Profile(ctx context.Context, userID string) (api.Profile, error)
	Catalogue(ctx context.Context) (*api.Catalogue, error)
	Versions() (items, events uint64)
	UserIDs(ctx context.Context, idx []uint32) ([]string, error)
	ItemFeatures(ctx context.Context) ([]string, [][]float64, error)
	ItemsInteracted(ctx context.Context, idx []uint32) ([]bool, error)
	Dumper
	// Backup streams a consistent copy of the database as one file
	// (bbolt: Store.Backup); the PostgreSQL store answers not_implemented,
	// naming pg_dump.
	Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error)
	Policy() api.Policy
	// Size is the database's size in bytes.
	Size() int64
	Close() error
}

var _ Backend = (*Store)(nil)
