package storage

import (
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/storage/record"
)

// The unapplied tail of the event log lives in memory as generations of
// raw events (docs/design.md#ingest). An append only adds its events to the
// current generation, chained by user, with the aggregates that need no
// look-up (events and items created, per-day counts, the items touched):
// no bbolt read. Folding them into records — each user's and pair's whole
// record as it stands after the events, and the changes of the users,
// pairs and positives counters and of popularity — takes the stored
// records, so it is done later, in key order and once per event: by the
// background folder as events arrive, by the applier before it writes
// them, or by a read of those aggregates that comes first (the result is
// kept; ingest.go, prefold). A read of one user folds just that user's
// events over its stored records.

// tailGen is one generation of the tail. Its raw part changes only while it
// is the current generation, under Store.tailMu; its folded part only under
// Store.foldMu, and never once the generation is frozen and fully folded.
type tailGen struct {
	end    int64 // log position after its last record
	events int64 // len(raw)

	// Raw, written at append time.
	raw      []logEvent
	prev     []int32          // the previous event of raw[k]'s user in this generation, -1 for none
	last     map[string]int32 // each user's last event
	newItems []tailItem
	itemIdx  map[string]uint64 // the items the tail created
	itemID   map[uint64]string
	counters map[string]int64 // events and items
	days     map[string]int64
	touched  map[uint64]struct{} // items with an event in this generation
	dayMemo  dayMemo

	// Folded: raw[:folded] are in these.
	folded     int
	users      map[string]*tailUser
	newUsers   []string // users the tail created, in first-seen order
	popDelta   map[uint64]int64
	pairsDelta map[uint64]int64 // new pairs, by item
	fcounts    map[string]int64 // users, pairs and positives
}

type tailItem struct {
	id      string
	idx     uint64
	created int64
}

type tailUser struct {
	// rec is the whole user record after the generation; its idx is 0
	// for a user bbolt has not stored yet (the applier assigns it).
	rec   userRecord
	pairs map[uint64]*tailPair // by item index
}

type tailPair struct {
	rec       record.Pair // the whole pair record after the generation
	laterDays map[string]int64
}

// newTailGen returns an empty generation ending at end, with room for
// hint events (the last one's size: a generation that fills grows in one
// step instead of doubling its way up).
func newTailGen(end int64, hint int) *tailGen {
	hint = min(hint, genEvents)
	return &tailGen{end: end, raw: make([]logEvent, 0, hint), prev: make([]int32, 0, hint),
		last: map[string]int32{}, itemIdx: map[string]uint64{},
		itemID: map[uint64]string{}, counters: map[string]int64{}, days: map[string]int64{},
		touched: map[uint64]struct{}{},
		users:   map[string]*tailUser{}, popDelta: map[uint64]int64{}, pairsDelta: map[uint64]int64{},
		fcounts: map[string]int64{}}
}

// dayMemo names the day of the last timestamp it was asked about, sparing
// the formatting for the next one of the same day.
type dayMemo struct {
	lo, hi int64
	name   string
}

// holds reports whether ts falls on day, the day last named.
func (m *dayMemo) holds(day string, ts int64) bool {
	if m.name == day {
		return ts >= m.lo && ts < m.hi
	}
	return record.DayOf(ts) == day
}

func (m *dayMemo) day(ts int64) string {
	if ts >= m.lo && ts < m.hi && m.name != "" {
		return m.name
	}
	name := record.DayOf(ts)
	t := record.FromNano(ts)
	y, mo, d := t.Date()
	lo := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	hi := lo.AddDate(0, 0, 1)
	// Only a day whose bounds are representable is kept.
	if ts != 0 && lo.UnixNano() <= ts && ts < hi.UnixNano() && record.DayOf(lo.UnixNano()) == name {
		m.lo, m.hi, m.name = lo.UnixNano(), hi.UnixNano(), name
	} else {
		m.name = ""
	}
	return name
}

// add appends the events of lb, whose record ends at end, to g. The caller
// holds Store.tailMu (or is the only user of g).
func (g *tailGen) add(lb *logBatch, end int64) {
	for k := range lb.events {
		e := &lb.events[k]
		if e.bits&evNewItem != 0 {
			if _, ok := g.itemIdx[e.item]; !ok {
				g.newItems = append(g.newItems, tailItem{id: e.item, idx: e.itemIdx, created: lb.arrival})
				g.itemIdx[e.item], g.itemID[e.itemIdx] = e.itemIdx, e.item
				g.counters[counterItems]++
			}
		}
		p, ok := g.last[e.user]
		if !ok {
			p = -1
		}
		g.last[e.user] = int32(len(g.raw))
		g.prev = append(g.prev, p)
		g.raw = append(g.raw, *e)
		g.days[g.dayMemo.day(e.ts)]++
		g.touched[e.itemIdx] = struct{}{}
	}
	n := int64(len(lb.events))
	g.counters[counterEvents] += n
	g.events += n
	g.end = end
}

// userEvents appends to buf the events of user id in g from raw index from
// on, oldest first.
func (g *tailGen) userEvents(buf []int32, id string, from int) []int32 {
	start := len(buf)
	k, ok := g.last[id]
	for ok && int(k) >= from {
		buf = append(buf, k)
		k = g.prev[k]
		ok = k >= 0
	}
	slices.Reverse(buf[start:])
	return buf
}

// foldLookups counts the bbolt reads of the fold (tests check that an
// append and a replay do none).
var foldLookups func()

// foldGen folds the raw events of g not folded yet on top of layers (the
// older generations of the tail, newest first, each folded whole) and
// bbolt as tx sees it. raw and prev are g's as some moment saw them (the
// caller holds Store.tailMu, or took them under it: appends only add to
// them). Users are looked up in key order, then each user's events are
// folded in arrival order, users in the order of their pairs' keys, so
// that consecutive look-ups share pages. Events of different users
// commute, so the records equal an event-by-event fold; new users are
// listed in the order of their first event. The caller holds foldMu.
func foldGen(tx *bolt.Tx, f *pairFilter, layers []*tailGen, g *tailGen, raw []logEvent, prev []int32) error {
	from, to := g.folded, len(raw)
	if from >= to {
		return nil
	}
	usersB, pairsB := tx.Bucket(bucketUsers), tx.Bucket(bucketPairs)
	// Each user's first event of the range, in arrival order, and each
	// event's next one of its user (relative to from; 0 for none).
	var firsts []int32
	next := make([]int32, to-from)
	for k := from; k < to; k++ {
		if p := int(prev[k]); p < from {
			firsts = append(firsts, int32(k))
		} else {
			next[p-from] = int32(k)
		}
	}
	byID := slices.Clone(firsts)
	slices.SortFunc(byID, func(a, b int32) int { return strings.Compare(raw[a].user, raw[b].user) })
	created := map[string]bool{}
	tus := make([]*tailUser, to-from) // by first event, relative to from
	for _, k := range byID {
		e := &raw[k]
		tu, isNew, err := g.user(layers, usersB, e.user, e.ts)
		if err != nil {
			return err
		}
		if isNew {
			created[e.user] = true
		}
		tus[int(k)-from] = tu
	}
	for _, k := range firsts {
		if id := raw[k].user; created[id] {
			g.newUsers = append(g.newUsers, id)
		}
	}
	byKey := slices.Clone(firsts)
	slices.SortFunc(byKey, func(a, b int32) int {
		ia, ib := tus[int(a)-from].rec.idx, tus[int(b)-from].rec.idx
		if ia != ib {
			if ia < ib {
				return -1
			}
			return 1
		}
		return strings.Compare(raw[a].user, raw[b].user)
	})
	var dm dayMemo      // not g's: appends may use that meanwhile
	var lus []*tailUser // the user's entries in the older generations
	for _, first := range byKey {
		tu := tus[int(first)-from]
		id := raw[first].user
		// Looked up once the user has a pair this generation does not
		// hold yet, and then once for all its events of the step.
		looked := false
		for k := first; ; k = next[int(k)-from] {
			e := &raw[k]
			if !looked && tu.pairs[e.itemIdx] == nil {
				lus, looked = lus[:0], true
				for _, l := range layers {
					if lu := l.users[id]; lu != nil {
						lus = append(lus, lu)
					}
				}
			}
			tp, fresh, err := g.pair(lus, pairsB, f, tu, e.itemIdx)
			if err != nil {
				return err
			}
			d := record.Fold(&tu.rec.User, &tp.rec, fresh, record.Event{TS: e.ts, Type: e.typ, Value: e.value,
				HasValue: e.bits&evHasValue != 0, Positive: e.bits&evPositive != 0, Negative: e.bits&evNegative != 0})
			if d != 0 {
				g.popDelta[e.itemIdx] += d
				g.fcounts[counterPositives] += d
			}
			if day := dm.day(e.ts); !dm.holds(day, tp.rec.First) {
				if tp.laterDays == nil {
					tp.laterDays = map[string]int64{}
				}
				tp.laterDays[day]++
			}
			if next[int(k)-from] == 0 {
				break
			}
		}
	}
	g.folded = to
	return nil
}

// user returns the generation's entry for user id, starting it from the
// newest record below (an older generation's or bbolt's), or creating the
// user (isNew).
func (g *tailGen) user(layers []*tailGen, users *bolt.Bucket, id string, ts int64) (tu *tailUser, isNew bool, err error) {
	if tu := g.users[id]; tu != nil {
		if tu.rec.idx == 0 {
			// Folded in an earlier step as a user of the tail only; the
			// older generation that created it may have been applied
			// since, with its pairs, which the next look-ups must find.
			if err := bboltUserIdx(users, id, &tu.rec); err != nil {
				return nil, false, err
			}
		}
		return tu, false, nil
	}
	tu = &tailUser{pairs: map[uint64]*tailPair{}}
	found := false
	for _, l := range layers {
		if lu := l.users[id]; lu != nil {
			tu.rec, found = lu.rec, true
			break
		}
	}
	if !found || tu.rec.idx == 0 {
		// A user an older generation created has index 0 in the tail;
		// once that generation is applied (and maybe dropped) bbolt holds
		// the index, and the pairs it applied.
		if foldLookups != nil {
			foldLookups()
		}
		if b := users.Get([]byte(id)); b != nil {
			rec, err := decodeUser(b)
			if err != nil {
				return nil, false, err
			}
			if found {
				tu.rec.idx = rec.idx
			} else {
				tu.rec, found = rec, true
			}
		}
	}
	if !found {
		tu.rec = userRecord{User: record.User{Created: ts}}
		g.fcounts[counterUsers]++
	}
	g.users[id] = tu
	return tu, !found, nil
}

// bboltUserIdx sets rec's index to bbolt's, if bbolt holds user id.
func bboltUserIdx(users *bolt.Bucket, id string, rec *userRecord) error {
	if foldLookups != nil {
		foldLookups()
	}
	if b := users.Get([]byte(id)); b != nil {
		stored, err := decodeUser(b)
		if err != nil {
			return err
		}
		rec.idx = stored.idx
	}
	return nil
}

// pair returns the generation's entry for the pair (tu, item) and whether
// the pair is new (no event anywhere yet). lus are the user's entries in
// the older generations of the tail, newest first; f (nil: none) spares
// the look-up in bbolt of a pair it does not hold.
func (g *tailGen) pair(lus []*tailUser, pairs *bolt.Bucket, f *pairFilter, tu *tailUser, item uint64) (*tailPair, bool, error) {
	if tp := tu.pairs[item]; tp != nil {
		return tp, false, nil
	}
	tp := &tailPair{}
	found := false
	for _, lu := range lus {
		if lp := lu.pairs[item]; lp != nil {
			tp.rec, found = lp.rec, true
			break
		}
	}
	// A user bbolt does not hold yet (idx 0) has all its pairs in the tail.
	if !found && tu.rec.idx != 0 && f.mayHold(tu.rec.idx, item) {
		if foldLookups != nil {
			foldLookups()
		}
		if b := pairs.Get(pairKey(tu.rec.idx, item)); b != nil {
			rec, err := decodePair(b)
			if err != nil {
				return nil, false, err
			}
			tp.rec, found = rec, true
		}
	}
	if !found {
		g.fcounts[counterPairs]++
		g.pairsDelta[item]++
	}
	tu.pairs[item] = tp
	return tp, !found, nil
}

// foldAll folds every generation of tail (newest first, as viewTail gives
// it) whole, oldest first. The caller holds foldMu.
func foldAll(tx *bolt.Tx, f *pairFilter, tail []*tailGen) error {
	for k := len(tail) - 1; k >= 0; k-- {
		g := tail[k]
		if err := foldGen(tx, f, tail[k+1:], g, g.raw, g.prev); err != nil {
			return err
		}
	}
	return nil
}

// tailUserFold folds the tail's events of user id (tail newest first) over
// the user's records in bbolt as tx sees them: the user's record and the
// pairs the tail touched, as the applier will write them. ok is false when
// the tail holds no event of id.
func tailUserFold(tx *bolt.Tx, tail []*tailGen, id string) (tu *tailUser, ok bool, err error) {
	var evs []int32
	var one *tailGen
	for k := len(tail) - 1; k >= 0; k-- {
		g := tail[k]
		evs = g.userEvents(evs[:0], id, 0)
		if len(evs) == 0 {
			continue
		}
		if one == nil {
			one = newTailGen(0, 0)
		}
		lb := logBatch{events: make([]logEvent, len(evs))}
		for j, e := range evs {
			lb.events[j] = g.raw[e]
			lb.events[j].bits &^= evNewItem
		}
		one.add(&lb, 0)
	}
	if one == nil {
		return nil, false, nil
	}
	if err := foldGen(tx, nil, nil, one, one.raw, one.prev); err != nil {
		return nil, false, err
	}
	return one.users[id], true, nil
}

// tailItemIndex finds an item the tail created.
func tailItemIndex(tail []*tailGen, id string) (uint64, bool) {
	for _, g := range tail {
		if idx, ok := g.itemIdx[id]; ok {
			return idx, true
		}
	}
	return 0, false
}

// tailItemID names an item the tail created.
func tailItemID(tail []*tailGen, idx uint64) (string, bool) {
	for _, g := range tail {
		if id, ok := g.itemID[idx]; ok {
			return id, true
		}
	}
	return "", false
}

// tailPopDelta is the tail's change of an item's popularity; the tail must
// be folded (foldAll).
func tailPopDelta(tail []*tailGen, idx uint64) int64 {
	return tailSum(tail, func(g *tailGen) int64 { return g.popDelta[idx] })
}

// tailCounter is the tail's change of a counter; the tail must be folded
// (foldAll).
func tailCounter(tail []*tailGen, name string) int64 {
	return tailSum(tail, func(g *tailGen) int64 { return g.counters[name] + g.fcounts[name] })
}

func tailSum(tail []*tailGen, delta func(*tailGen) int64) int64 {
	d := int64(0)
	for _, g := range tail {
		d += delta(g)
	}
	return d
}

func addAll[K comparable](dst, src map[K]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

// tailNewItem finds an item the tail created, with its creation time.
func tailNewItem(tail []*tailGen, id string) (tailItem, bool) {
	for _, g := range tail {
		if _, ok := g.itemIdx[id]; ok {
			for _, it := range g.newItems {
				if it.id == id {
					return it, true
				}
			}
		}
	}
	return tailItem{}, false
}
