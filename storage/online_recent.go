package storage

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// The bbolt store finds a user's recent lists (attribution by window)
// through an index in memory: an index on disk keyed by user would take an
// insert at a random place of its B-tree for every list shown, which cost a
// third of the server's throughput under load. The index holds the lists
// of the longest window asked for (at least DefaultRecentWindow), at most
// maxRecent of them, about 100 bytes each; it is rebuilt from the log
// (keyed by time) at the first use after an open.

// DefaultRecentWindow is how far back the index reaches before a longer
// window is asked for.
const DefaultRecentWindow = 30 * time.Minute

// maxRecent bounds the index; past it the oldest lists leave it early.
const maxRecent = 1 << 22

type recentEntry struct {
	user, id string
	at       int64
}

type recentIndex struct {
	mu     sync.Mutex
	built  bool
	keep   time.Duration
	byUser map[string][]recentEntry // time order
	fifo   []recentEntry            // all, time order from head
	head   int
	newest int64
}

// recentIndex returns the store's index, built (or rebuilt, for a longer
// window) from the log when needed.
func (s *Store) recentIndex(ctx context.Context, window time.Duration) (*recentIndex, error) {
	r := &s.recent
	r.mu.Lock()
	defer r.mu.Unlock()
	window = max(window, DefaultRecentWindow)
	if r.built && window <= r.keep {
		return r, nil
	}
	r.keep, r.byUser, r.fifo, r.head = window, map[string][]recentEntry{}, nil, 0
	from := binary.BigEndian.AppendUint64(nil, uint64(s.now().Add(-window).UnixNano()))
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketImps)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(from); k != nil; k, v = c.Next() {
			imp, err := decodeImpression(k, v)
			if err != nil {
				return err
			}
			r.push(recentEntry{user: imp.UserID, id: imp.ID, at: record.UnixNano(imp.At)})
		}
		return nil
	})
	r.built = err == nil
	return r, err
}

// add indexes lists just written.
func (r *recentIndex) add(imps []api.Impression) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, imp := range imps {
		r.push(recentEntry{user: imp.UserID, id: imp.ID, at: record.UnixNano(imp.At)})
	}
}

// push adds one list and drops those that left the window; r.mu held. A
// list without a user (an anonymous history's) is not indexed: only an
// event naming its id is credited to it (Matches).
func (r *recentIndex) push(e recentEntry) {
	if e.user == "" {
		return
	}
	r.fifo = append(r.fifo, e)
	r.byUser[e.user] = append(r.byUser[e.user], e)
	r.newest = max(r.newest, e.at)
	cut := r.newest - int64(r.keep)
	for r.head < len(r.fifo) && (r.fifo[r.head].at < cut || len(r.fifo)-r.head > maxRecent) {
		old := r.fifo[r.head]
		r.fifo[r.head] = recentEntry{}
		r.head++
		list := r.byUser[old.user]
		if len(list) > 0 && list[0].id == old.id {
			list = list[1:] // the user's oldest, as lists come in time order
		} else if k := slices.IndexFunc(list, func(x recentEntry) bool { return x.id == old.id }); k >= 0 {
			list = slices.Delete(list, k, k+1)
		}
		if len(list) == 0 {
			delete(r.byUser, old.user)
		} else {
			r.byUser[old.user] = list
		}
	}
	if r.head > len(r.fifo)/2 && r.head > 1024 {
		r.fifo = append(r.fifo[:0:0], r.fifo[r.head:]...)
		r.head = 0
	}
}

// lookup lists the ids of user's lists shown from..to (Unix ns), newest
// first.
func (r *recentIndex) lookup(user string, from, to int64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	list := r.byUser[user]
	for k := len(list) - 1; k >= 0; k-- {
		if e := list[k]; e.at >= from && e.at <= to {
			out = append(out, e.id)
		}
	}
	return out
}
