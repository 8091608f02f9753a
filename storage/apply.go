package storage

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The applier and the folder (docs/design.md#ingest): the tail is folded
// into records in steps, in read transactions of their own or in the
// apply's, and each apply writes every frozen generation into bbolt in one
// transaction.

// applyEvery is the applier's pace when nothing wakes it sooner (tests
// quicken it).
var applyEvery = 500 * time.Millisecond

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
		if s.afterApply != nil {
			s.afterApply()
		}
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
		size += 16 + pairSize(p.tp.rec)
	}
	slab := make([]byte, 0, size)
	for _, p := range puts {
		at := len(slab)
		slab = binary.BigEndian.AppendUint64(slab, p.user)
		slab = binary.BigEndian.AppendUint64(slab, p.item)
		key := slab[at:len(slab):len(slab)]
		slab = appendPair(slab, p.tp.rec)
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
