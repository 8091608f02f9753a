package storage

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// pairFilter is a Bloom filter over the pairs bbolt holds, blocked to one
// 64-bit word a pair so that a question costs one cache miss. A fold that
// meets a pair the tail does not hold asks it before looking the pair up
// in bbolt: a "no", the answer for most of the new pairs that scattered
// events bring, spares a descent of the pairs B-tree (docs/performance.md "Scale").
//
// It answers "maybe" for every pair bbolt holds: a table is built, in the
// background once the applier first applies events, from the pairs bbolt
// holds when it starts, and the applier and a restore
// set the pairs they write, before they commit them, in the answering
// table and in the one being built. A deleted pair keeps its bits: the
// stale "maybe" costs one look-up. Until its first table is built it
// answers "maybe" to everything. When the pairs outgrow the answering
// table twice over, the applier starts a larger one (grow); it answers
// once built.
type pairFilter struct {
	table atomic.Pointer[filterTable] // the answering table; nil until the first is built
	next  atomic.Pointer[filterTable] // a table being built
	wg    sync.WaitGroup              // the build in flight
}

// filterTable is one table of the filter, sized for pairs.
type filterTable struct {
	words []atomic.Uint64
	pairs int64
}

// filterBitsPerPair sizes a table: 16 bits a pair, rounded up to a power
// of two, leave about 1 in 200 of the absent pairs a false "maybe" (4 bits
// of a word a pair); twice the pairs, about 1 in 30.
const filterBitsPerPair = 16

func newFilterTable(pairs int64) *filterTable {
	words := 1 << 14
	for int64(words)*64 < pairs*filterBitsPerPair {
		words <<= 1
	}
	return &filterTable{words: make([]atomic.Uint64, words), pairs: pairs}
}

// slot returns the word of pair (user, item) and the 4 bits it sets there.
func (t *filterTable) slot(user, item uint64) (*atomic.Uint64, uint64) {
	h := (user*0x9e3779b97f4a7c15 ^ item) * 0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	w := &t.words[(h>>32)&uint64(len(t.words)-1)]
	m := uint64(1)<<(h&63) | uint64(1)<<(h>>6&63) | uint64(1)<<(h>>12&63) | uint64(1)<<(h>>18&63)
	return w, m
}

func (t *filterTable) add(user, item uint64) {
	w, m := t.slot(user, item)
	if w.Load()&m != m {
		w.Or(m)
	}
}

func (t *filterTable) mayHold(user, item uint64) bool {
	w, m := t.slot(user, item)
	return w.Load()&m == m
}

// add sets pair (user, item), which bbolt is about to hold, in the table
// being built and the answering one. It reads next first: a build ends by
// making its table the answering one and then clearing next, so an add
// that finds next cleared finds the new table answering. (Read the other
// way round, an add could take the old table before the switch and next
// after the clear, and the pair would be missing from the new table.)
func (f *pairFilter) add(user, item uint64) {
	next := f.next.Load()
	if next != nil {
		next.add(user, item)
	}
	if t := f.table.Load(); t != nil && t != next {
		t.add(user, item)
	}
}

// mayHold reports whether bbolt may hold the pair (user, item); false means
// it does not. A nil filter says "maybe".
func (f *pairFilter) mayHold(user, item uint64) bool {
	if f == nil {
		return true
	}
	t := f.table.Load()
	return t == nil || t.mayHold(user, item)
}

// grow starts building, in the background, a table sized for pairs when
// there is none yet or the answering one was sized for less than half of
// them. The caller must have no write in flight that sets pairs (the
// applier between its transactions, holding applyMu): a pair committed
// before the new table exists is then one its build reads. It returns at
// once; stop closed abandons the build.
func (f *pairFilter) grow(db *bolt.DB, pairs int64, stop <-chan struct{}) {
	if f.next.Load() != nil {
		return
	}
	if t := f.table.Load(); t != nil && pairs <= 2*t.pairs {
		return
	}
	t := newFilterTable(pairs)
	f.next.Store(t)
	f.wg.Go(func() {
		if t.build(db, stop) {
			f.table.Store(t)
		}
		f.next.Store(nil)
	})
}

// build sets the pairs of db in t, in read transactions of filterChunk
// keys each (a long read would hold up a commit that grows the file). It
// reports false, having given up, when stop is closed or a read fails.
func (t *filterTable) build(db *bolt.DB, stop <-chan struct{}) bool {
	var after []byte
	for done := false; !done; {
		select {
		case <-stop:
			return false
		default:
		}
		err := db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketPairs).Cursor()
			k, _ := c.First()
			if after != nil {
				if k, _ = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, _ = c.Next()
				}
			}
			for n := 0; k != nil && n < filterChunk; k, _ = c.Next() {
				t.add(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]))
				after = append(after[:0], k...)
				n++
			}
			done = k == nil
			return nil
		})
		if err != nil {
			return false
		}
	}
	return true
}

// filterChunk is the most pairs one read transaction of a build takes.
const filterChunk = 1 << 20
