package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
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

// userRecord is the value in the users bucket: the user's dense index and
// the record both stores keep.
type userRecord struct {
	idx uint64
	record.User
}

const userRecordSize = 48

func (r userRecord) encode() []byte {
	return r.appendTo(make([]byte, 0, userRecordSize))
}

// appendTo appends r's encoding (userRecordSize bytes) to b.
func (r userRecord) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, r.idx)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Created))
	b = binary.BigEndian.AppendUint64(b, uint64(r.LastSeen))
	b = binary.BigEndian.AppendUint64(b, uint64(r.Items))
	b = binary.BigEndian.AppendUint64(b, uint64(r.Positives))
	return binary.BigEndian.AppendUint64(b, uint64(r.Events))
}

func decodeUser(b []byte) (userRecord, error) {
	if len(b) != userRecordSize {
		return userRecord{}, fmt.Errorf("storage: user record of %d bytes, want %d", len(b), userRecordSize)
	}
	return userRecord{idx: binary.BigEndian.Uint64(b[0:]), User: record.User{
		Created:   int64(binary.BigEndian.Uint64(b[8:])),
		LastSeen:  int64(binary.BigEndian.Uint64(b[16:])),
		Items:     int64(binary.BigEndian.Uint64(b[24:])),
		Positives: int64(binary.BigEndian.Uint64(b[32:])),
		Events:    int64(binary.BigEndian.Uint64(b[40:])),
	}}, nil
}

// pairSize is the length of p's encoding in the pairs bucket.
func pairSize(p record.Pair) int { return 33 + len(p.LastType) }

// encodePair is p as the pairs bucket holds it.
func encodePair(p record.Pair) []byte {
	return appendPair(make([]byte, 0, pairSize(p)), p)
}

// appendPair appends p's encoding to b.
func appendPair(b []byte, p record.Pair) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(p.Count))
	b = binary.BigEndian.AppendUint64(b, uint64(p.First))
	b = binary.BigEndian.AppendUint64(b, uint64(p.Last))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Value))
	b = append(b, p.Flags)
	return append(b, p.LastType...)
}

func decodePair(b []byte) (record.Pair, error) {
	if len(b) < 33 {
		return record.Pair{}, fmt.Errorf("storage: pair record of %d bytes", len(b))
	}
	return record.Pair{
		Count:    int64(binary.BigEndian.Uint64(b[0:])),
		First:    int64(binary.BigEndian.Uint64(b[8:])),
		Last:     int64(binary.BigEndian.Uint64(b[16:])),
		Value:    math.Float64frombits(binary.BigEndian.Uint64(b[24:])),
		Flags:    b[32],
		LastType: string(b[33:]),
	}, nil
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
		Hidden: r.Hidden, CreatedAt: record.FromNano(r.Created), UpdatedAt: record.FromNano(r.Updated), Positives: positives}
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
