package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// Options are what a contract test asks of a new store.
type Options struct {
	Policy api.Policy       // zero: api.DefaultPolicy()
	Now    func() time.Time // nil: time.Now
}

// Opener opens an empty store for one test; the store is closed when the
// test ends.
type Opener func(tb testing.TB, o Options) backend.Store

// Contract runs the storage contract against the stores open makes: the
// same assertions for every adapter, through the public interface only.
func Contract(t *testing.T, open Opener) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, open Opener)
}{
	{"counts", testCounts},
	{"policy", testPolicy},
	{"all or nothing", testAllOrNothing},
	{"timestamps", testTimestamps},
	{"delete user", testDeleteUser},
	{"delete item", testDeleteItem},
	{"delete interaction", testDeleteInteraction},
	{"history pages", testHistoryPages},
	{"items pages", testItemsPages},
	{"users pages", testUsersPages},
	{"put items", testPutItems},
	{"update item", testUpdateItem},
	{"snapshot", testSnapshot},
	{"snapshot days", testSnapshotDays},
	{"activity", testActivity},
	{"activity after deletes", testActivityAfterDeletes},
	{"profile and lookups", testProfile},
	{"versions", testVersions},
	{"models", testModels},
	{"jobs", testJobs},
	{"reports", testReports},
	{"concurrent ingest", testConcurrentIngest},
	{"concurrent updates", testConcurrentUpdates},
	{"concurrent deletes", testConcurrentDeletes},
	{"invariants", testInvariants},
	{"dump and restore", testDumpRestore},
	{"online", testOnline},
	{"online pruning", testOnlinePrune},
	{"online placements", testOnlinePlacements},
	{"experiments", testExperiments},
	{"rules and placements", testRules},
}

var bg = context.Background()

// Ev is a view event of user on item.
func Ev(user, item, typ string) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ}
}

// Evv is an event with a value.
func Evv(user, item, typ string, v float64) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ, Value: v, HasValue: true}
}

// At is a view event on a day of March 2026, at noon UTC.
func At(user, item string, day int) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: "view", Timestamp: time.Date(2026, 3, day, 12, 0, 0, 0, time.UTC)}
}

// MustAdd stores a batch or fails the test.
func MustAdd(tb testing.TB, s backend.Store, evs ...api.Interaction) {
	tb.Helper()
	if n, err := s.AddInteractions(bg, evs); err != nil || n != len(evs) {
		tb.Fatalf("AddInteractions = %d, %v; want %d", n, err, len(evs))
	}
}

// MustCounts reads the counters or fails the test.
func MustCounts(tb testing.TB, s backend.Store) api.Counts {
	tb.Helper()
	c, err := s.Counts(bg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func mustUser(tb testing.TB, s backend.Store, id string) api.User {
	tb.Helper()
	u, err := s.User(bg, id)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func mustItem(tb testing.TB, s backend.Store, id string) api.Item {
	tb.Helper()
	it, err := s.Item(bg, id)
	if err != nil {
		tb.Fatal(err)
	}
	return it
}
