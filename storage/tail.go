package storage

import (
	bolt "go.etcd.io/bbolt"
)

// The unapplied tail of the event log lives in memory as generations: the
// records an applier transaction will fold into bbolt, kept as the
// records they make, not as events. Each generation holds, for every user
// and pair its events touched, the whole record as it stands after them
// (folded at append time through the same fold as the bbolt writer), and
// the changes of the counters, popularity and per-day counts as deltas.
// A read takes the newest generation holding a record, else bbolt's, and
// adds the deltas, so it sees an acknowledged event at once; applying a
// generation writes its records as they are (docs/design.md#ingest).

// tailGen is one generation of the tail. Its maps change only while it is
// the current generation, under Store.tailMu; a frozen one is read-only.
type tailGen struct {
	end      int64 // log position after its last record
	events   int64
	users    map[string]*tailUser
	newUsers []string // users the tail created, in first-seen order
	newItems []tailItem
	itemIdx  map[string]uint64 // the items the tail created
	itemID   map[uint64]string
	popDelta map[uint64]int64
	counters map[string]int64
	days     map[string]int64
	touched  map[uint64]struct{} // items with a pair in this generation
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
	rec        pairRecord // the whole pair record after the generation
	writeIndex bool       // the item_users entry must be (re)written
	laterDays  map[string]int64
}

func newTailGen(end int64) *tailGen {
	return &tailGen{end: end, users: map[string]*tailUser{}, itemIdx: map[string]uint64{},
		itemID: map[uint64]string{}, popDelta: map[uint64]int64{}, counters: map[string]int64{},
		days: map[string]int64{}, touched: map[uint64]struct{}{}}
}

// foldBatch folds the events of lb into a new generation on top of layers
// (the tail, newest first) and bbolt as tx sees it. The caller merges the
// result into the current generation once the record is in the log.
func foldBatch(tx *bolt.Tx, layers []*tailGen, lb *logBatch) (*tailGen, error) {
	g := newTailGen(0)
	users, pairs := tx.Bucket(bucketUsers), tx.Bucket(bucketPairs)
	for k := range lb.events {
		e := &lb.events[k]
		if e.bits&evNewItem != 0 {
			if _, ok := g.itemIdx[e.item]; !ok {
				g.newItems = append(g.newItems, tailItem{id: e.item, idx: e.itemIdx, created: lb.arrival})
				g.itemIdx[e.item], g.itemID[e.itemIdx] = e.itemIdx, e.item
				g.counters[counterItems]++
			}
		}
		tu, err := g.user(layers, users, e.user, e.ts)
		if err != nil {
			return nil, err
		}
		tp, fresh, err := g.pair(layers, pairs, tu, e.user, e.itemIdx)
		if err != nil {
			return nil, err
		}
		d, changed := fold(&tu.rec, &tp.rec, fresh, pairEvent{ts: e.ts, typ: e.typ, value: e.value,
			hasValue: e.bits&evHasValue != 0, positive: e.bits&evPositive != 0, negative: e.bits&evNegative != 0})
		tp.writeIndex = tp.writeIndex || changed
		if d != 0 {
			g.popDelta[e.itemIdx] += d
			g.counters[counterPositives] += d
		}
		g.counters[counterEvents]++
		day := dayOf(e.ts)
		g.days[day]++
		if day != dayOf(tp.rec.first) {
			if tp.laterDays == nil {
				tp.laterDays = map[string]int64{}
			}
			tp.laterDays[day]++
		}
		g.touched[e.itemIdx] = struct{}{}
		g.events++
	}
	return g, nil
}

// user returns the generation's entry for user id, starting it from the
// newest record below (an older generation's or bbolt's), or creating the
// user.
func (g *tailGen) user(layers []*tailGen, users *bolt.Bucket, id string, ts int64) (*tailUser, error) {
	if tu := g.users[id]; tu != nil {
		return tu, nil
	}
	tu := &tailUser{pairs: map[uint64]*tailPair{}}
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
		if b := users.Get([]byte(id)); b != nil {
			rec, err := decodeUser(b)
			if err != nil {
				return nil, err
			}
			if found {
				tu.rec.idx = rec.idx
			} else {
				tu.rec, found = rec, true
			}
		}
	}
	if !found {
		tu.rec = userRecord{created: ts}
		g.newUsers = append(g.newUsers, id)
		g.counters[counterUsers]++
	}
	g.users[id] = tu
	return tu, nil
}

// pair returns the generation's entry for the pair (user, item) and
// whether the pair is new (no event anywhere yet).
func (g *tailGen) pair(layers []*tailGen, pairs *bolt.Bucket, tu *tailUser, user string, item uint64) (*tailPair, bool, error) {
	if tp := tu.pairs[item]; tp != nil {
		return tp, false, nil
	}
	tp := &tailPair{}
	found := false
	for _, l := range layers {
		if lu := l.users[user]; lu != nil {
			if lp := lu.pairs[item]; lp != nil {
				tp.rec, found = lp.rec, true
				break
			}
		}
	}
	// A user bbolt does not hold yet (idx 0) has all its pairs in the tail.
	if !found && tu.rec.idx != 0 {
		if b := pairs.Get(pairKey(tu.rec.idx, item)); b != nil {
			rec, err := decodePair(b)
			if err != nil {
				return nil, false, err
			}
			tp.rec, found = rec, true
		}
	}
	if !found {
		g.counters[counterPairs]++
	}
	tu.pairs[item] = tp
	return tp, !found, nil
}

// merge adds the later generation p (folded on top of g) into g.
func (g *tailGen) merge(p *tailGen) {
	for id, pu := range p.users {
		gu := g.users[id]
		if gu == nil {
			g.users[id] = pu
			continue
		}
		gu.rec = pu.rec
		for item, pp := range pu.pairs {
			gp := gu.pairs[item]
			if gp == nil {
				gu.pairs[item] = pp
				continue
			}
			gp.rec = pp.rec
			gp.writeIndex = gp.writeIndex || pp.writeIndex
			for day, n := range pp.laterDays {
				if gp.laterDays == nil {
					gp.laterDays = map[string]int64{}
				}
				gp.laterDays[day] += n
			}
		}
	}
	g.newUsers = append(g.newUsers, p.newUsers...)
	g.newItems = append(g.newItems, p.newItems...)
	for id, idx := range p.itemIdx {
		g.itemIdx[id], g.itemID[idx] = idx, id
	}
	addAll(g.popDelta, p.popDelta)
	addAll(g.counters, p.counters)
	addAll(g.days, p.days)
	for item := range p.touched {
		g.touched[item] = struct{}{}
	}
	g.events += p.events
}

func addAll[K comparable](dst, src map[K]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

// tailUserRecord is the newest record of user id in the tail.
func tailUserRecord(tail []*tailGen, id string) (*tailUser, bool) {
	for _, g := range tail {
		if tu := g.users[id]; tu != nil {
			return tu, true
		}
	}
	return nil, false
}

// tailPairs returns the newest tail record of each pair of user id.
func tailPairs(tail []*tailGen, id string) map[uint64]*pairRecord {
	var out map[uint64]*pairRecord
	for _, g := range tail {
		tu := g.users[id]
		if tu == nil {
			continue
		}
		if out == nil {
			out = make(map[uint64]*pairRecord, len(tu.pairs))
		}
		for item, tp := range tu.pairs {
			if _, ok := out[item]; !ok {
				out[item] = &tp.rec
			}
		}
	}
	return out
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

func tailPopDelta(tail []*tailGen, idx uint64) int64 {
	return tailSum(tail, func(g *tailGen) int64 { return g.popDelta[idx] })
}

func tailCounter(tail []*tailGen, name string) int64 {
	return tailSum(tail, func(g *tailGen) int64 { return g.counters[name] })
}

func tailSum(tail []*tailGen, delta func(*tailGen) int64) int64 {
	d := int64(0)
	for _, g := range tail {
		d += delta(g)
	}
	return d
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
