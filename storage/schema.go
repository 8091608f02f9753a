// Package storage is the bbolt store of recsys. It implements the api
// services for interactions, users, items, models, jobs and reports
// (backend.Store). What it shares with the PostgreSQL store
// (storage/postgres), the records and the fold of events into them, is in
// storage/record, and the dump format in storage/dump.
//
// Layout (every bucket is created in one transaction at open):
//
//	meta        "schema"                 → uint64 schema version
//	            "c/<name>"               → uint64 counter (users, items, pairs, positives, events)
//	            "c/d/<YYYYMMDD>"         → uint64 events accepted with a timestamp on that UTC day
//	            "log/id"                 → 16 random bytes naming the event log (<db>.events/)
//	            "log/applied"            → uint64 log position up to which events are applied
//	users       user id                  → userRecord (binary, 48 bytes: dense index, created,
//	                                       last seen, items, positives, events)
//	user_ids    uint64 dense index (BE)  → user id
//	items       item id                  → itemRecord (JSON: index, features, categories,
//	                                       labels, hidden, created, updated)
//	item_ids    uint64 dense index (BE)  → item id
//	user_order  record.OrderKey(user id) → nothing: the users in natural order,
//	item_order  record.OrderKey(item id)   and the items, what GET /users and /items page
//	item_pop    uint64 item index (BE)   → uint64 number of users for whom it is relevant
//	pairs       user index | item index  → record.Pair (binary: count, first/last seen,
//	            (16 bytes, BE)             last value, flags, last type)
//	item_pairs  uint64 item index (BE)   → uint64 number of users with any event of it (pairs)
//	pair_days   user index | item index  → uint64 events of the pair on that UTC day, only for
//	            | "YYYYMMDD"               days other than the day of the pair's first event, whose
//	                                       count is the rest; so deleting a pair takes its events
//	                                       off the per-day counters, day by day
//	models      name | version           → persisted model blob (issue 4)
//	jobs        job id                   → job record JSON
//	reports     report id                → evaluation report JSON
//	impressions at (8, BE) | recommendation id → user, model, version, experiment, arm, items,
//	                                       placement when there is one (uvarint-prefixed strings,
//	                                       online.go); time first, so
//	                                       writes append; a user's recent lists are indexed in
//	                                       memory (online_recent.go)
//	attributions recommendation id | 0   → one flags byte (attrClick, attrConversion)
//	            | position (2, BE)
//	online      YYYYMMDD | 0 | model | 0 → four uint64 (BE): lists, impressions, clicks,
//	            | experiment | 0 | arm     conversions
//	            [| 0 | placement]          (no placement: no fifth field)
//	experiments experiment id            → JSON (record.EncodeExperiment); meta
//	                                       "experiment/running" names the running one
//	rules       rule name                → JSON (record.EncodeRule)
//	placements  placement name           → JSON (record.EncodePlacement)
//
// Dense indices come from each bucket's NextSequence and are never reused, so
// a deleted user or item leaves a gap. Big-endian keys make cursor order equal
// numeric order, and a user's pairs are one prefix scan (Seek + HasPrefix).
// Events are written to the event log (eventlog.go) and answered after its
// fsync; the applier folds them into these buckets later, and reads merge
// the part not yet applied (tail.go, ingest.go). Every other write is one
// bbolt Update transaction and returns only after bbolt has committed
// (fsync) it.
package storage

// The online buckets (impressions to experiments) were added within
// version 4, and rules and placements within version 6: a writable open
// creates them, and reads of a file opened read-only without them find
// nothing.
//
// SchemaVersion is written at creation and checked at open; a file of a
// newer version is refused (checkSchema), and every older one, from 1
// on, is migrated at its first writable open, in one transaction. Version
// 2 moved an item record's dense index out of its JSON into 8 leading
// bytes and added the per-day counters: a version 1 file gets both at
// its first writable open (migrateItemRecords, then migrateDays) and is
// refused read-only. storage/testdata/schema holds a file of every older
// version, made by its code (make.sh there). Version 3 added pair_days;
// a version 2 file is migrated when opened for writing (migrateDays) and
// read as it is when opened read-only. Version 4 added the event log
// (meta "log/id" and "log/applied"); a version 3 file gets an empty log at
// its first writable open. A binary that reads only
// version 3 refuses a version 4 file, which may have events in its log.
// Version 5 replaced item_users, an index entry per pair that only item
// deletes and the cold/unpopular test read, by item_pairs, a count per
// item: one B-tree write per pair fewer (docs/performance.md "Scale"). A file of an
// older version gets the counts from its item_users, and loses that
// bucket, at its first writable open (migrateItemPairs); opened read-only
// it is read as it is.
//
// Version 6 added user_order and item_order, which a version 5 file gets
// from its users and items at its first writable open (migrateOrder);
// opened read-only it is listed by sorting its ids in memory.
//
// Version 7 records the placement of a list: after the items of its
// impression and as a fifth field of its counters' key, both left out for
// a list without one, which is how every list of version 6 is stored. So
// a version 6 file is read as it is, writable or read-only, its lists and
// counters as lists without a placement, and its first writable open only
// raises the version: a binary of version 6 would read a placement into
// the arm of a counter.
const SchemaVersion = 7

var (
	bucketMeta      = []byte("meta")
	bucketUsers     = []byte("users")
	bucketUserIDs   = []byte("user_ids")
	bucketItems     = []byte("items")
	bucketItemIDs   = []byte("item_ids")
	bucketUserOrder = []byte("user_order")
	bucketItemOrder = []byte("item_order")
	bucketItemPop   = []byte("item_pop")
	bucketPairs     = []byte("pairs")
	bucketItemPairs = []byte("item_pairs")
	bucketItemUsers = []byte("item_users") // versions 2–4 only
	bucketPairDays  = []byte("pair_days")
	bucketModels    = []byte("models")
	bucketJobs      = []byte("jobs")
	bucketReports   = []byte("reports")
	bucketImps      = []byte("impressions")
	bucketAttrib    = []byte("attributions")
	bucketOnline    = []byte("online")
	bucketExps      = []byte("experiments")
	bucketRules     = []byte("rules")
	bucketPlaces    = []byte("placements")

	allBuckets = [][]byte{bucketMeta, bucketUsers, bucketUserIDs, bucketItems, bucketItemIDs,
		bucketItemPop, bucketPairs, bucketItemPairs, bucketPairDays, bucketModels, bucketJobs, bucketReports,
		bucketImps, bucketAttrib, bucketOnline, bucketExps, bucketUserOrder, bucketItemOrder,
		bucketRules, bucketPlaces}

	keySchema = []byte("schema")
)

// Counter names, stored under "c/<name>" in meta.
const (
	counterUsers     = "users"
	counterItems     = "items"
	counterPairs     = "pairs"
	counterPositives = "positives"
	counterEvents    = "events"
)
