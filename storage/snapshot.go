package storage

import (
	"context"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Snapshot reads the training data in one read transaction, so the pairs,
// ids and item features are mutually consistent (docs/design.md#jobs).
func (s *Store) Snapshot(ctx context.Context) (*api.Snapshot, error) {
	snap := &api.Snapshot{TakenAt: s.now().UTC()}
	// The tail is applied first, so the snapshot holds every event
	// acknowledged before the call.
	if err := s.syncTail(ctx); err != nil {
		return nil, err
	}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		snap.Events = counter(tx.Bucket(bucketMeta), counterEvents)
		snap.UserIDs = readIDs(tx.Bucket(bucketUserIDs))
		cat, feats, err := readCatalogue(tx, true)
		if err != nil {
			return err
		}
		snap.ItemIDs, snap.Hidden, snap.Categories = cat.ItemIDs, cat.Hidden, cat.Categories
		snap.FeatureNames, snap.Features = record.DenseFeatures(feats)
		n := counter(tx.Bucket(bucketMeta), counterPositives)
		snap.Users = make([]uint32, 0, n)
		snap.Items = make([]uint32, 0, n)
		snap.Days = make([]int32, 0, n)
		c := tx.Bucket(bucketPairs).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) < 33 || !record.Relevant(v[32]) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			snap.Users = append(snap.Users, uint32(binary.BigEndian.Uint64(k)))
			snap.Items = append(snap.Items, uint32(binary.BigEndian.Uint64(k[8:])))
			snap.Days = append(snap.Days, record.DayNumber(int64(binary.BigEndian.Uint64(v[8:]))))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// Catalogue reads the serving view of the items.
func (s *Store) Catalogue(ctx context.Context) (*api.Catalogue, error) {
	var cat *api.Catalogue
	if err := s.prefold(ctx); err != nil {
		return nil, err
	}
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		var err error
		if cat, _, err = readCatalogue(tx, false); err != nil {
			return err
		}
		if err := s.foldTail(tx, tail); err != nil {
			return err
		}
		mergeTailCatalogue(cat, tail)
		return nil
	})
	return cat, err
}

// mergeTailCatalogue adds the items the tail created and its popularity
// changes to cat.
func mergeTailCatalogue(cat *api.Catalogue, tail []*tailGen) {
	for _, g := range tail {
		for _, it := range g.newItems {
			for uint64(len(cat.ItemIDs)) <= it.idx {
				cat.ItemIDs = append(cat.ItemIDs, "")
				cat.Hidden = append(cat.Hidden, false)
				cat.Categories = append(cat.Categories, nil)
				cat.Popularity = append(cat.Popularity, 0)
			}
			cat.ItemIDs[it.idx] = it.id
			cat.Index[it.id] = uint32(it.idx)
		}
	}
	for _, g := range tail {
		for idx, d := range g.popDelta {
			if idx < uint64(len(cat.Popularity)) {
				cat.Popularity[idx] += d
			}
		}
	}
}

// readIDs returns the id at each dense index of an index → id bucket.
func readIDs(b *bolt.Bucket) []string {
	ids := make([]string, b.Sequence()+1)
	_ = b.ForEach(func(k, v []byte) error {
		if idx := getU64(k); idx < uint64(len(ids)) {
			ids[idx] = string(v)
		}
		return nil
	})
	return ids
}

func readCatalogue(tx *bolt.Tx, withFeatures bool) (*api.Catalogue, []map[string]float64, error) {
	n := tx.Bucket(bucketItemIDs).Sequence() + 1
	cat := &api.Catalogue{
		ItemIDs:    make([]string, n),
		Index:      make(map[string]uint32, n),
		Hidden:     make([]bool, n),
		Categories: make([][]string, n),
		Popularity: make([]int64, n),
	}
	var feats []map[string]float64
	if withFeatures {
		feats = make([]map[string]float64, n)
	}
	err := tx.Bucket(bucketItems).ForEach(func(k, v []byte) error {
		r, err := decodeItem(v)
		if err != nil {
			return err
		}
		if r.Idx >= n {
			return nil
		}
		id := string(k)
		cat.ItemIDs[r.Idx] = id
		cat.Index[id] = uint32(r.Idx)
		cat.Hidden[r.Idx] = r.Hidden
		cat.Categories[r.Idx] = r.Categories
		if withFeatures {
			feats[r.Idx] = r.Features
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = tx.Bucket(bucketItemPop).ForEach(func(k, v []byte) error {
		if idx := getU64(k); idx < n {
			cat.Popularity[idx] = int64(getU64(v))
		}
		return nil
	})
	return cat, feats, err
}

// ItemFeatures reads every item's features as dense vectors over the sorted
// union of feature names (nil for items without features), by dense index.
func (s *Store) ItemFeatures(ctx context.Context) ([]string, [][]float64, error) {
	var names []string
	var out [][]float64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		_, feats, err := readCatalogue(tx, true)
		if err != nil {
			return err
		}
		names, out = record.DenseFeatures(feats)
		return nil
	})
	return names, out, err
}

// ItemAttributes reads the labels, features and creation times of the
// items, by dense index.
func (s *Store) ItemAttributes(ctx context.Context) (*api.ItemAttributes, error) {
	var out *api.ItemAttributes
	err := s.view(ctx, func(tx *bolt.Tx) error {
		n := tx.Bucket(bucketItemIDs).Sequence() + 1
		out = &api.ItemAttributes{Labels: make([]map[string]string, n), Features: make([]map[string]float64, n), Created: make([]int64, n)}
		return tx.Bucket(bucketItems).ForEach(func(k, v []byte) error {
			r, err := decodeItem(v)
			if err != nil {
				return err
			}
			if r.Idx < n {
				out.Labels[r.Idx], out.Features[r.Idx], out.Created[r.Idx] = r.Labels, r.Features, r.Created
			}
			return nil
		})
	})
	return out, err
}
