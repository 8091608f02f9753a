package storage

import (
	"context"
	"errors"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// How the other operations meet the unapplied tail: writes that change
// more than events run exclusive (the whole tail applied first), reads see
// the tail beside bbolt (viewTail), and the training snapshot and dumps
// apply it first (syncTail).

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
