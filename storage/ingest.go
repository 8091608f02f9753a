package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Ingest through the event log (docs/design.md#ingest): a batch is judged,
// its new items get their dense indices, its record is written to the log
// and folded into the current tail generation, and the answer waits for the
// group fsync. The applier folds whole generations into bbolt in the
// background (apply.go); every other write to users, pairs or items first
// applies the whole tail, under the append lock, so it sees and changes a
// store with no tail (tail_access.go).

const (
	// genEvents is the size at which an appender freezes the current
	// generation and wakes the applier. A fold looks each user up in
	// every older generation, so fewer, larger generations cost less
	// (docs/performance.md "Scale": 2¹⁸ before, when a backlog spread over eight).
	genEvents = 1 << 20
)

// maxTailEvents bounds the unapplied tail not yet taken by an apply
// transaction: appenders wait beyond it (tests lower it). The generations
// a transaction is writing do not count, so that appenders wait only when
// a whole bound arrived during one transaction, not for the rest of every
// transaction that began with the tail at the bound (at 10M scattered
// events one can last over 10 s, the request timeout: docs/performance.md "Scale"). The
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
func (s *Store) appendEvents(ctx context.Context, evs []api.Interaction, js []record.Verdict, now int64) (int, error) {
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
func (s *Store) appendLocked(evs []api.Interaction, js []record.Verdict, now int64) (int64, error) {
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
		*e = logEvent{user: ev.UserID, item: ev.ItemID, typ: ev.Type, ts: record.UnixNano(ev.Timestamp), value: ev.Value}
		if e.ts == 0 {
			e.ts = now
		}
		if ev.HasValue {
			e.bits |= evHasValue
		}
		if js[k].Positive {
			e.bits |= evPositive
		}
		if js[k].Negative {
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
