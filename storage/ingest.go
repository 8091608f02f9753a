package storage

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"recsys/api"
)

// Ingest through the event log (docs/design.md#ingest): a batch is judged,
// its new items get their dense indices, its record is written to the log
// and folded into the current tail generation, and the answer waits for the
// group fsync. The applier folds whole generations into bbolt in the
// background; every other write to users, pairs or items first applies the
// whole tail, under the append lock, so it sees and changes a store with
// no tail.

const (
	// genEvents is the size at which an appender freezes the current
	// generation and wakes the applier. A fold looks each user up in
	// every older generation, so fewer, larger generations cost less
	// (README "Scale": 2¹⁸ before, when a backlog spread over eight).
	genEvents = 1 << 20
)

// applyEvery is the applier's pace when nothing wakes it sooner (tests
// quicken it).
var applyEvery = 500 * time.Millisecond

// maxTailEvents bounds the unapplied tail not yet taken by an apply
// transaction: appenders wait beyond it (tests lower it). The generations
// a transaction is writing do not count, so that appenders wait only when
// a whole bound arrived during one transaction, not for the rest of every
// transaction that began with the tail at the bound (at 10M scattered
// events one can last over 10 s, the request timeout: README "Scale"). The
// tail then holds at most twice the bound.
var maxTailEvents int64 = 1 << 20

// maxPace is the longest an appender is paced before it appends: the
// delay grows from 0 with the tail outside the transaction in flight at
// half its bound to maxPace at the bound, so that appenders slow to the
// applier's rate before they meet the bound's wall (tests lower it).
var maxPace = time.Second

// pace is how long an appender waits before it appends (pacing). The
// caller holds s.mu.
func (s *Store) pace() time.Duration {
	half := maxTailEvents / 2
	out := s.outside()
	if out <= half || half <= 0 {
		return 0
	}
	return time.Duration(float64(maxPace) * min(1, float64(out-half)/float64(half)))
}

var keyLogApplied = []byte("log/applied")
var keyLogID = []byte("log/id")

// appendEvents is AddInteractions on the log.
func (s *Store) appendEvents(ctx context.Context, evs []api.Interaction, js []judged, now int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if d := s.pace(); d > 0 {
		s.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		s.mu.Lock()
	}
	if s.full() || ctx.Err() != nil {
		// Wait for the applier, but not past the request's deadline: a
		// request given up stores nothing.
		stop := context.AfterFunc(ctx, func() {
			s.mu.Lock()
			s.room.Broadcast()
			s.mu.Unlock()
		})
		for s.full() && s.applyErr == nil && !s.closed && ctx.Err() == nil {
			s.room.Wait()
		}
		stop()
		if err := ctx.Err(); err != nil {
			held := s.outside()
			s.mu.Unlock()
			if errors.Is(err, context.DeadlineExceeded) {
				e := api.Errorf(api.CodeUnavailable, "the event log holds %d events not yet applied to the indexes (its bound is %d), and the applier freed no room before the request's deadline; nothing was stored: retry", held, maxTailEvents)
				// Room comes at the commit under way, seconds away.
				e.RetryAfter = 1
				return 0, e
			}
			return 0, err
		}
	}
	if s.applyErr != nil && !s.closed {
		// Retry the failed apply (space may have returned) before taking
		// more: a store that cannot apply takes nothing.
		s.mu.Unlock()
		s.applyTail()
		s.mu.Lock()
	}
	pos, err := s.appendLocked(evs, js, now)
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if err := s.log.waitDurable(pos); err != nil {
		return 0, err
	}
	s.eventsVersion.Add(1)
	return len(evs), nil
}

// outside is the tail outside the apply transaction in flight, what the
// bound and the pacing count. The caller holds s.mu.
func (s *Store) outside() int64 { return s.tailEvents - s.applying }

// full reports whether the tail outside the transaction in flight is at
// its bound. The caller holds s.mu.
func (s *Store) full() bool { return s.outside() >= maxTailEvents }

// appendLocked writes and folds one batch; the caller holds s.mu.
func (s *Store) appendLocked(evs []api.Interaction, js []judged, now int64) (int64, error) {
	if s.closed {
		return 0, errors.New("storage: the store is closed")
	}
	if s.applyErr != nil {
		return 0, s.writeErr(s.applyErr)
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	layers := s.layers()
	lb := logBatch{arrival: now, events: make([]logEvent, len(evs))}
	items := tx.Bucket(bucketItems)
	next := s.nextItem
	created := map[string]uint64{}
	for k, ev := range evs {
		e := &lb.events[k]
		*e = logEvent{user: ev.UserID, item: ev.ItemID, typ: ev.Type, ts: unixNano(ev.Timestamp), value: ev.Value}
		if e.ts == 0 {
			e.ts = now
		}
		if ev.HasValue {
			e.bits |= evHasValue
		}
		if js[k].positive {
			e.bits |= evPositive
		}
		if js[k].negative {
			e.bits |= evNegative
		}
		if idx, ok := s.storedItems[ev.ItemID]; ok {
			e.itemIdx = idx
		} else if idx, ok := created[ev.ItemID]; ok {
			e.itemIdx = idx
		} else if idx, ok := tailItemIndex(layers, ev.ItemID); ok {
			e.itemIdx = idx
		} else if b := items.Get([]byte(ev.ItemID)); b != nil {
			if e.itemIdx, err = itemIndexOf(b); err != nil {
				return 0, err
			}
			s.rememberItem(ev.ItemID, e.itemIdx)
		} else {
			e.itemIdx, e.bits = next, e.bits|evNewItem
			created[ev.ItemID] = next
			next++
		}
	}
	size := tx.Size()
	tx.Rollback() // before s.tailMu: see viewTail
	s.recBuf = encodeRecord(s.recBuf[:0], &lb)
	s.log.mu.Lock()
	if s.maxSize > 0 && size+s.log.written+int64(len(s.recBuf)) > s.maxSize {
		s.log.mu.Unlock()
		return 0, s.writeErr(errMaxSize)
	}
	pos, err := s.log.write(s.recBuf)
	s.log.mu.Unlock()
	if cap(s.recBuf) > 16<<20 {
		s.recBuf = nil
	}
	if err != nil {
		return 0, s.writeErr(err)
	}
	s.nextItem = next
	s.addToTail(&lb, pos)
	return pos, nil
}

// rememberItem keeps the index of an item bbolt holds for the next
// appends (an item's index never changes; an item delete or a restore
// forgets them all). The caller holds s.mu.
func (s *Store) rememberItem(id string, idx uint64) {
	if s.storedItems == nil || len(s.storedItems) >= maxStoredItems {
		s.storedItems = map[string]uint64{}
	}
	s.storedItems[id] = idx
}

// maxStoredItems bounds rememberItem's map: past it, it starts again.
const maxStoredItems = 1 << 20

// errMaxSize is a write that would take the database file and the event
// log past Options.MaxSize together.
var errMaxSize = fmt.Errorf("storage: the database and its event log: %w", bolterrors.ErrMaxSizeReached)

// layers returns the tail generations newest first. The caller holds s.mu
// (so no generation is dropped meanwhile).
func (s *Store) layers() []*tailGen {
	out := make([]*tailGen, 0, len(s.gens))
	for k := len(s.gens) - 1; k >= 0; k-- {
		out = append(out, s.gens[k])
	}
	return out
}

// addToTail adds the events of lb, whose record ends at pos, to the
// current generation, and freezes it when full. The caller holds s.mu.
func (s *Store) addToTail(lb *logBatch, pos int64) {
	s.tailMu.Lock()
	cur := s.gens[len(s.gens)-1]
	cur.add(lb, pos)
	full := cur.events >= genEvents
	if full {
		s.gens = append(s.gens, newTailGen(pos, genEvents))
	}
	s.tailMu.Unlock()
	s.tailEvents += int64(len(lb.events))
	select {
	case s.foldKick <- struct{}{}:
	default:
	}
	if full {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// replay adds a record read from the log at open to the tail: no bbolt
// read, the applier folds it.
func (s *Store) replay(lb *logBatch, end int64) error {
	for _, e := range lb.events {
		s.nextItem = max(s.nextItem, e.itemIdx+1)
	}
	s.addToTail(lb, end)
	return nil
}

// applier folds the tail into bbolt until stop is closed.
func (s *Store) applier() {
	t := time.NewTicker(applyEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		case <-t.C:
		}
		s.applyTail()
	}
}

// folder folds the tail in the background as appends add to it, until
// stop is closed: whatever came while it folded is its next step, so its
// steps grow with the rate. The reads of the aggregates and the applier
// then find the tail folded but for the last few events, instead of
// folding up to a whole backlog while they wait. A failure is left to the
// read or the apply that meets it again.
func (s *Store) folder() {
	for {
		select {
		case <-s.stop:
			return
		case <-s.foldKick:
		}
		_ = s.prefold(context.Background())
	}
}

// applyTail applies every generation of the tail, the current one
// included, one bbolt transaction each. It records the first failure in
// s.applyErr (cleared by the next success) and returns it.
func (s *Store) applyTail() error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(true)
}

// applyLocked is applyTail for a caller holding s.applyMu and s.mu. With
// unlock, s.mu is let go during each bbolt transaction so that appenders
// go on meanwhile.
func (s *Store) applyLocked(unlock bool) error {
	if s.log == nil || s.readOnly {
		return nil
	}
	s.freezeLocked()
	if len(s.gens) == 1 {
		return nil
	}
	// Every frozen generation in one transaction: scattered updates dirty
	// most leaf pages of pairs whatever a transaction's
	// size, so its cost is nearly fixed and its events per page grow with
	// the backlog; an applier that falls behind catches up in larger
	// steps instead of settling at a fixed, lower rate.
	frozen := s.gens[:len(s.gens)-1]
	var events int64
	for _, g := range frozen {
		events += g.events
	}
	s.applying = events
	if unlock {
		s.mu.Unlock()
		// The room the frozen generations took is the appenders' again.
		s.room.Broadcast()
	}
	// Fold before the write transaction, in read transactions, so that
	// the writers waiting for bbolt's lock (jobs, catalogue writes) wait
	// for the writes only; a failure here shows again in applyFrozen.
	_ = s.prefold(context.Background())
	err := s.writeErr(s.db.Update(func(tx *bolt.Tx) error { return s.applyFrozen(tx, frozen) }))
	if unlock {
		s.mu.Lock()
	}
	s.applying = 0
	if err != nil {
		s.applyErr = err
		s.room.Broadcast()
		return err
	}
	s.tailMu.Lock()
	s.gens = s.gens[len(frozen):]
	s.tailMu.Unlock()
	s.tailEvents -= events
	s.applyErr = nil
	s.room.Broadcast()
	s.growFilter()
	return nil
}

// growFilter gives the pair filter a larger table, built in the
// background, once the stored pairs outgrew the one it has. The caller
// holds applyMu, so no write that sets pairs is in flight.
func (s *Store) growFilter() {
	if s.filter == nil {
		return
	}
	var pairs int64
	err := s.db.View(func(tx *bolt.Tx) error {
		pairs = int64(getU64(tx.Bucket(bucketMeta).Get([]byte("c/" + counterPairs))))
		return nil
	})
	if err == nil {
		s.filter.grow(s.db, pairs, s.stop)
	}
}

// applyFrozen folds the frozen generations (the oldest of the tail) and
// writes them in tx.
func (s *Store) applyFrozen(tx *bolt.Tx, frozen []*tailGen) error {
	if err := s.foldFrozen(tx, frozen); err != nil {
		return err
	}
	return applyGens(tx, s.filter, frozen)
}

// foldChunk is the most events a fold step takes while it holds foldMu and
// a bbolt transaction: a read waiting on foldMu waits for one step at most,
// and a commit that grows the file (which waits for every read
// transaction) for one step of the folder's.
const foldChunk = 1 << 14

// foldingGen is a generation of the tail as some moment saw it: its raw
// events then, and the log position it ended at.
type foldingGen struct {
	g    *tailGen
	raw  []logEvent
	prev []int32
	end  int64
}

// foldStep folds at most budget events of gens (oldest first, every one
// unapplied in tx, each on top of the older ones) and reports whether they
// are all folded. The caller holds foldMu.
func foldStep(tx *bolt.Tx, f *pairFilter, gens []foldingGen, budget int) (bool, error) {
	var layers []*tailGen // newest first
	for _, g := range gens {
		if from := g.g.folded; from < len(g.raw) {
			to := min(len(g.raw), from+budget)
			if err := foldGen(tx, f, layers, g.g, g.raw[:to], g.prev[:to]); err != nil {
				return false, err
			}
			if to < len(g.raw) {
				return false, nil // the newer ones need this one whole
			}
			budget -= to - from
		}
		layers = append([]*tailGen{g.g}, layers...)
	}
	return true, nil
}

// foldFrozen folds the generations frozen (the oldest of the tail) whole,
// on the state tx sees, in steps of foldChunk events; foldMu is let go
// between them and before the commit: a read holding its transaction may
// wait on foldMu, and a commit that grows the file waits for every read
// transaction.
func (s *Store) foldFrozen(tx *bolt.Tx, frozen []*tailGen) error {
	gens := make([]foldingGen, len(frozen))
	for k, g := range frozen {
		gens[k] = foldingGen{g, g.raw, g.prev, g.end}
	}
	for {
		s.foldMu.Lock()
		done, err := foldStep(tx, s.filter, gens, foldChunk)
		s.foldMu.Unlock()
		if done || err != nil {
			return err
		}
	}
}

// prefold folds the tail as it stands, without holding tailMu (appenders go
// on meanwhile), in steps of foldChunk events, each in a read transaction
// of its own, so that the fold a read of the aggregates then does under
// tailMu (foldTail) is only of the events that came in between: a read
// may wait on foldMu for one step of the applier's or the folder's, but
// never makes appenders wait for a whole backlog's fold.
func (s *Store) prefold(ctx context.Context) error {
	if s.log == nil {
		return nil
	}
	s.tailMu.RLock()
	gens := make([]foldingGen, 0, len(s.gens))
	for _, g := range s.gens {
		if g.events > 0 {
			gens = append(gens, foldingGen{g, g.raw, g.prev, g.end})
		}
	}
	s.tailMu.RUnlock()
	for done := len(gens) == 0; !done; {
		err := s.view(ctx, func(tx *bolt.Tx) error {
			applied := int64(getU64(tx.Bucket(bucketMeta).Get(keyLogApplied)))
			for len(gens) > 0 && gens[0].end <= applied {
				gens = gens[1:]
			}
			s.foldMu.Lock()
			defer s.foldMu.Unlock()
			var err error
			done, err = foldStep(tx, s.filter, gens, foldChunk)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// foldTail folds every generation of tail (viewTail's) whole, for the reads
// of the aggregates; prefold first spares appenders most of the wait.
func (s *Store) foldTail(tx *bolt.Tx, tail []*tailGen) error {
	if len(tail) == 0 {
		return nil
	}
	s.foldMu.Lock()
	defer s.foldMu.Unlock()
	return foldAll(tx, s.filter, tail)
}

// freezeLocked starts a new current generation if the current one holds
// anything. The caller holds s.mu.
func (s *Store) freezeLocked() {
	cur := s.gens[len(s.gens)-1]
	if cur.events == 0 {
		return
	}
	s.tailMu.Lock()
	s.gens = append(s.gens, newTailGen(cur.end, int(cur.events)))
	s.tailMu.Unlock()
}

// applyGens applies the generations gens, oldest first, in the
// transaction tx; the log position stored is the last one's end. A page
// several of them change is written once, at the commit.
func applyGens(tx *bolt.Tx, f *pairFilter, gens []*tailGen) error {
	for _, g := range gens {
		if err := applyGen(tx, f, g); err != nil {
			return err
		}
	}
	return nil
}

// applyGen writes the records of generation g into bbolt, and the log
// position it reaches, in one transaction: a crash leaves the store before
// or after the whole generation, and the log replay starts where it ends.
func applyGen(tx *bolt.Tx, f *pairFilter, g *tailGen) error {
	w := newWriter(tx)
	seq := w.itemID.Sequence()
	for _, it := range g.newItems {
		if w.items.Get([]byte(it.id)) != nil {
			return fmt.Errorf("storage: item %q of the event log exists already", it.id)
		}
		rec, err := itemRecord{Idx: it.idx, Created: it.created, Updated: it.created}.encode()
		if err != nil {
			return err
		}
		if err := w.items.Put([]byte(it.id), rec); err != nil {
			return err
		}
		if err := w.itemID.Put(u64(it.idx), []byte(it.id)); err != nil {
			return err
		}
		w.newItems = append(w.newItems, it.id)
		seq = max(seq, it.idx)
	}
	if err := w.itemID.SetSequence(seq); err != nil {
		return err
	}
	idxOf := make(map[string]uint64, len(g.newUsers))
	for _, id := range g.newUsers {
		if w.users.Get([]byte(id)) != nil {
			return fmt.Errorf("storage: user %q of the event log exists already", id)
		}
		idx, err := w.userIDs.NextSequence()
		if err != nil {
			return err
		}
		if err := w.userIDs.Put(u64(idx), []byte(id)); err != nil {
			return err
		}
		w.newUsers = append(w.newUsers, id)
		idxOf[id] = idx
	}
	type pairPut struct {
		user, item uint64
		tp         *tailPair
	}
	puts := make([]pairPut, 0, g.events)
	for id, tu := range g.users {
		rec := tu.rec
		if rec.idx == 0 {
			rec.idx = idxOf[id]
		}
		if rec.idx == 0 {
			// Created by an earlier generation, applied since.
			b := w.users.Get([]byte(id))
			if b == nil {
				return fmt.Errorf("storage: user %q of the event log is missing", id)
			}
			old, err := decodeUser(b)
			if err != nil {
				return err
			}
			rec.idx = old.idx
		}
		w.userCache[id] = &rec
		for item, tp := range tu.pairs {
			puts = append(puts, pairPut{rec.idx, item, tp})
		}
	}
	// Key order keeps each insert next to the previous one in bbolt's
	// page cache and appends runs of new keys at a node's end.
	slices.SortFunc(puts, func(a, b pairPut) int {
		if c := cmp.Compare(a.user, b.user); c != 0 {
			return c
		}
		return cmp.Compare(a.item, b.item)
	})
	// bbolt keeps the keys and values it is given until the commit: one
	// slab holds them all, sized exactly so that it never moves, instead
	// of two allocations a pair for the collector to trace.
	size := 0
	for _, p := range puts {
		size += 16 + p.tp.rec.size()
	}
	slab := make([]byte, 0, size)
	for _, p := range puts {
		at := len(slab)
		slab = binary.BigEndian.AppendUint64(slab, p.user)
		slab = binary.BigEndian.AppendUint64(slab, p.item)
		key := slab[at:len(slab):len(slab)]
		slab = p.tp.rec.appendTo(slab)
		if err := w.pairs.Put(key, slab[at+16:len(slab):len(slab)]); err != nil {
			return err
		}
		if f != nil {
			f.add(p.user, p.item)
		}
		for day, n := range p.tp.laterDays {
			w.pairDayDelta[pairDayKey(key, day)] += n
		}
	}
	addAll(w.popDelta, g.popDelta)
	addAll(w.pairsDelta, g.pairsDelta)
	addAll(w.counters, g.counters)
	addAll(w.counters, g.fcounts)
	addAll(w.days, g.days)
	if err := w.meta.Put(keyLogApplied, u64(uint64(g.end))); err != nil {
		return err
	}
	return w.flush()
}

// exclusive runs fn with the whole tail applied and no append running: the
// writes that change users, pairs or items other than by adding events
// (deletes, catalogue writes) see and change a store with no tail.
func (s *Store) exclusive(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.log == nil || s.readOnly {
		return fn()
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("storage: the store is closed")
	}
	if err := s.applyLocked(false); err != nil {
		return err
	}
	return fn()
}

// updateExclusive is update run by exclusive.
func (s *Store) updateExclusive(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.exclusive(ctx, func() error { return s.update(ctx, fn) })
}

// syncTail applies the whole tail, so that a read transaction begun after
// it sees every event acknowledged before the call (the training
// snapshot).
func (s *Store) syncTail(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.log == nil || s.readOnly {
		return nil
	}
	return s.applyTail()
}

// viewTail runs fn in a read transaction with the part of the tail that
// transaction has not applied, newest first. The tail is read under
// s.tailMu; appenders take it only with no bbolt transaction open (a
// pending remap would otherwise wait on them while they wait on readers).
func (s *Store) viewTail(ctx context.Context, fn func(tx *bolt.Tx, tail []*tailGen) error) error {
	if s.log == nil {
		return s.view(ctx, func(tx *bolt.Tx) error { return fn(tx, nil) })
	}
	s.tailMu.RLock()
	defer s.tailMu.RUnlock()
	return s.view(ctx, func(tx *bolt.Tx) error {
		applied := int64(getU64(tx.Bucket(bucketMeta).Get(keyLogApplied)))
		var tail []*tailGen
		for k := len(s.gens) - 1; k >= 0; k-- {
			if g := s.gens[k]; g.events > 0 && g.end > applied {
				tail = append(tail, g)
			}
		}
		return fn(tx, tail)
	})
}

// TailEvents is the number of acknowledged events not yet applied to the
// bbolt indexes (the applier's lag).
func (s *Store) TailEvents() int64 {
	if s.log == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tailEvents
}

// LogBytes is the size of the event log on disk.
func (s *Store) LogBytes() int64 {
	if s.log == nil {
		return 0
	}
	return s.log.size()
}

// LogHistory reports whether the event log holds any record, and its size:
// the raw history of every event ingested through it, which dumps (and so
// migrate) do not copy, since every event in it is in the records.
func (s *Store) LogHistory() (bytes int64, any bool) {
	if s.log == nil {
		return 0, false
	}
	path := s.Path()
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	has, err := logHasRecords(path)
	return s.LogBytes(), has && err == nil
}

// tailHasEvents reports whether the event log holds events not applied
// (or being applied) to bbolt.
func (s *Store) tailHasEvents() bool {
	if s.log == nil {
		return false
	}
	s.tailMu.RLock()
	defer s.tailMu.RUnlock()
	for _, g := range s.gens {
		if g.events > 0 {
			return true
		}
	}
	return false
}

// tailHasNewItems reports whether the tail created any item.
func (s *Store) tailHasNewItems() bool {
	if s.log == nil {
		return false
	}
	s.tailMu.RLock()
	defer s.tailMu.RUnlock()
	for _, g := range s.gens {
		if len(g.newItems) > 0 {
			return true
		}
	}
	return false
}
