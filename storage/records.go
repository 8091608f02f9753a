package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
)

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// pairKey is prefix|suffix as two big-endian uint64s.
func pairKey(a, b uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, a)
	binary.BigEndian.PutUint64(k[8:], b)
	return k
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// userRecord is the value in the users bucket.
type userRecord struct {
	idx       uint64
	created   int64
	lastSeen  int64
	items     int64
	positives int64
	events    int64
}

const userRecordSize = 48

func (r userRecord) encode() []byte {
	return r.appendTo(make([]byte, 0, userRecordSize))
}

// appendTo appends r's encoding (userRecordSize bytes) to b.
func (r userRecord) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, r.idx)
	b = binary.BigEndian.AppendUint64(b, uint64(r.created))
	b = binary.BigEndian.AppendUint64(b, uint64(r.lastSeen))
	b = binary.BigEndian.AppendUint64(b, uint64(r.items))
	b = binary.BigEndian.AppendUint64(b, uint64(r.positives))
	return binary.BigEndian.AppendUint64(b, uint64(r.events))
}

func decodeUser(b []byte) (userRecord, error) {
	if len(b) != userRecordSize {
		return userRecord{}, fmt.Errorf("storage: user record of %d bytes, want %d", len(b), userRecordSize)
	}
	return userRecord{
		idx:       binary.BigEndian.Uint64(b[0:]),
		created:   int64(binary.BigEndian.Uint64(b[8:])),
		lastSeen:  int64(binary.BigEndian.Uint64(b[16:])),
		items:     int64(binary.BigEndian.Uint64(b[24:])),
		positives: int64(binary.BigEndian.Uint64(b[32:])),
		events:    int64(binary.BigEndian.Uint64(b[40:])),
	}, nil
}

func (r userRecord) toAPI(id string) api.User {
	return api.User{ID: id, CreatedAt: fromNano(r.created), LastSeen: fromNano(r.lastSeen),
		Items: r.items, Positives: r.positives, Events: r.events}
}

// Pair flags.
const (
	flagReached  = 1 << 0 // some positive event reached its type's threshold
	flagNegative = 1 << 1 // the latest relevance-changing event was negative
	flagHasValue = 1 << 2
)

// relevant is X(u,i) = 1: reached and not overridden by a negative event.
func relevant(flags byte) bool { return flags&flagReached != 0 && flags&flagNegative == 0 }

// pairRecord is the value in the pairs bucket.
type pairRecord struct {
	count    int64
	first    int64
	last     int64
	value    float64
	flags    byte
	lastType string
}

func (r pairRecord) encode() []byte {
	return r.appendTo(make([]byte, 0, r.size()))
}

// size is the length of r's encoding.
func (r pairRecord) size() int { return 33 + len(r.lastType) }

// appendTo appends r's encoding to b.
func (r pairRecord) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(r.count))
	b = binary.BigEndian.AppendUint64(b, uint64(r.first))
	b = binary.BigEndian.AppendUint64(b, uint64(r.last))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.value))
	b = append(b, r.flags)
	return append(b, r.lastType...)
}

func decodePair(b []byte) (pairRecord, error) {
	if len(b) < 33 {
		return pairRecord{}, fmt.Errorf("storage: pair record of %d bytes", len(b))
	}
	return pairRecord{
		count:    int64(binary.BigEndian.Uint64(b[0:])),
		first:    int64(binary.BigEndian.Uint64(b[8:])),
		last:     int64(binary.BigEndian.Uint64(b[16:])),
		value:    math.Float64frombits(binary.BigEndian.Uint64(b[24:])),
		flags:    b[32],
		lastType: string(b[33:]),
	}, nil
}

func (r pairRecord) toAPI(itemID string) api.HistoryEntry {
	return api.HistoryEntry{ItemID: itemID, LastType: r.lastType, Count: r.count, Value: r.value,
		HasValue: r.flags&flagHasValue != 0, FirstSeen: fromNano(r.first), LastSeen: fromNano(r.last),
		Positive: relevant(r.flags), Negative: r.flags&flagNegative != 0}
}

// itemRecord is the value in the items bucket: the dense index as 8
// big-endian bytes, then the rest as JSON, so that ingest finds an item's
// index without decoding its features.
type itemRecord struct {
	Idx        uint64             `json:"-"`
	Features   map[string]float64 `json:"features,omitempty"`
	Categories []string           `json:"categories,omitempty"`
	Labels     map[string]string  `json:"labels,omitempty"`
	Hidden     bool               `json:"hidden,omitempty"`
	Created    int64              `json:"created"`
	Updated    int64              `json:"updated"`
}

func (r itemRecord) encode() ([]byte, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(u64(r.Idx), js...), nil
}

// itemIndexOf reads only the dense index of an encoded item record.
func itemIndexOf(b []byte) (uint64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("storage: item record of %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func decodeItem(b []byte) (itemRecord, error) {
	var r itemRecord
	idx, err := itemIndexOf(b)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b[8:], &r); err != nil {
		return r, fmt.Errorf("storage: item record: %w", err)
	}
	r.Idx = idx
	return r, nil
}

func (r itemRecord) toAPI(id string, positives int64) api.Item {
	return api.Item{ID: id, Features: r.Features, Categories: r.Categories, Labels: r.Labels,
		Hidden: r.Hidden, CreatedAt: fromNano(r.Created), UpdatedAt: fromNano(r.Updated), Positives: positives}
}

// storedUser reads the record of user id; an unknown user is not_found.
func storedUser(tx *bolt.Tx, id string) (userRecord, error) {
	b := tx.Bucket(bucketUsers).Get([]byte(id))
	if b == nil {
		return userRecord{}, notFound("user", id)
	}
	return decodeUser(b)
}

// storedItem reads the record of item id; an unknown item is not_found.
func storedItem(tx *bolt.Tx, id string) (itemRecord, error) {
	b := tx.Bucket(bucketItems).Get([]byte(id))
	if b == nil {
		return itemRecord{}, notFound("item", id)
	}
	return decodeItem(b)
}
