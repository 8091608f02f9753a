package storage

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// pairFilter is a Bloom filter over the pairs bbolt holds, blocked to one
// 64-bit word a pair so that a question costs one cache miss. A fold that
// meets a pair the tail does not hold asks it before looking the pair up
// in bbolt: a "no", the answer for most of the new pairs that scattered
// events bring, spares a descent of the pairs B-tree (README "Scale").
//
// It answers "maybe" for every pair bbolt holds: the build at open sets
// the pairs bbolt held then, and the applier sets the pairs it writes
// before it commits them, as does a restore. A deleted pair keeps its
// bits: the stale "maybe" costs one look-up. Until the build is done it
// answers "maybe" to everything.
type pairFilter struct {
	ready atomic.Bool
	words []atomic.Uint64
}

// filterBitsPerPair sizes the filter at open: 16 bits a pair, rounded up
// to a power of two, leave about 1 in 200 of the absent pairs a false
// "maybe" (4 bits of a word a pair); twice the pairs, about 1 in 30.
const filterBitsPerPair = 16

func newPairFilter(pairs int64) *pairFilter {
	words := 1 << 14
	for int64(words)*64 < pairs*filterBitsPerPair {
		words <<= 1
	}
	return &pairFilter{words: make([]atomic.Uint64, words)}
}

// slot returns the word of pair (user, item) and the 4 bits it sets there.
func (f *pairFilter) slot(user, item uint64) (*atomic.Uint64, uint64) {
	h := (user*0x9e3779b97f4a7c15 ^ item) * 0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	w := &f.words[(h>>32)&uint64(len(f.words)-1)]
	m := uint64(1)<<(h&63) | uint64(1)<<(h>>6&63) | uint64(1)<<(h>>12&63) | uint64(1)<<(h>>18&63)
	return w, m
}

func (f *pairFilter) add(user, item uint64) {
	w, m := f.slot(user, item)
	if w.Load()&m != m {
		w.Or(m)
	}
}

// mayHold reports whether bbolt may hold the pair (user, item); false means
// it does not. A nil filter says "maybe".
func (f *pairFilter) mayHold(user, item uint64) bool {
	if f == nil || !f.ready.Load() {
		return true
	}
	w, m := f.slot(user, item)
	return w.Load()&m == m
}

// build sets the pairs of db, in read transactions of filterChunk keys
// each (a long read would hold up a commit that grows the file), and
// then makes the filter answer. It gives up, leaving the filter saying
// "maybe", when stop is closed or a read fails.
func (f *pairFilter) build(db *bolt.DB, stop <-chan struct{}) {
	var after []byte
	for done := false; !done; {
		select {
		case <-stop:
			return
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
				f.add(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]))
				after = append(after[:0], k...)
				n++
			}
			done = k == nil
			return nil
		})
		if err != nil {
			return
		}
	}
	f.ready.Store(true)
}

// filterChunk is the most pairs one read transaction of the build takes.
const filterChunk = 1 << 20
