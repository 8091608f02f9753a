package storage

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// CreateRule stores a new rule; a conflict if one has its name.
func (s *Store) CreateRule(ctx context.Context, r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRules)
		if b.Get([]byte(r.Name)) != nil {
			return api.Errorf(api.CodeConflict, "rule %q exists; PUT /admin/rules/%s replaces it", r.Name, r.Name)
		}
		return b.Put([]byte(r.Name), v)
	})
}

// UpdateRule replaces a stored rule.
func (s *Store) UpdateRule(ctx context.Context, r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRules)
		if b.Get([]byte(r.Name)) == nil {
			return notFound("rule", r.Name)
		}
		return b.Put([]byte(r.Name), v)
	})
}

// DeleteRule deletes a stored rule.
func (s *Store) DeleteRule(ctx context.Context, name string) error {
	return s.deleteNamed(ctx, bucketRules, "rule", name)
}

// Rules lists the rules by name.
func (s *Store) Rules(ctx context.Context) ([]api.Rule, error) {
	var out []api.Rule
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return forEachNamed(tx, bucketRules, func(name string, v []byte) error {
			r, err := record.DecodeRule(name, v)
			out = append(out, r)
			return err
		})
	})
	return out, err
}

// PutPlacement creates or replaces a placement.
func (s *Store) PutPlacement(ctx context.Context, p api.Placement) (created bool, err error) {
	v, err := record.EncodePlacement(p)
	if err != nil {
		return false, err
	}
	err = s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPlaces)
		created = b.Get([]byte(p.Name)) == nil
		return b.Put([]byte(p.Name), v)
	})
	return created, err
}

// DeletePlacement deletes a stored placement.
func (s *Store) DeletePlacement(ctx context.Context, name string) error {
	return s.deleteNamed(ctx, bucketPlaces, "placement", name)
}

// Placements lists the placements by name.
func (s *Store) Placements(ctx context.Context) ([]api.Placement, error) {
	var out []api.Placement
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return forEachNamed(tx, bucketPlaces, func(name string, v []byte) error {
			p, err := record.DecodePlacement(name, v)
			out = append(out, p)
			return err
		})
	})
	return out, err
}

func (s *Store) deleteNamed(ctx context.Context, bucket []byte, kind, name string) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte(name)) == nil {
			return notFound(kind, name)
		}
		return b.Delete([]byte(name))
	})
}

// forEachNamed calls fn with each key and value of bucket, in key order;
// a file opened read-only without the bucket has none.
func forEachNamed(tx *bolt.Tx, bucket []byte, fn func(name string, v []byte) error) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error { return fn(string(k), v) })
}
