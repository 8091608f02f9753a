package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/record"
)

// The online records of a dump (online.go): the impression log, what was
// credited to each shown item, the per-day counters and the experiments.

// dumpOnline writes the online buckets to sink. A file opened read-only
// from before the online buckets has none of them, so nothing to write.
func dumpOnline(tx *bolt.Tx, sink dump.Sink) error {
	if b := tx.Bucket(bucketImps); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			if len(k) < 8 {
				return fmt.Errorf("impression key of %d bytes", len(k))
			}
			imp, err := decodeImpression(k, v)
			if err != nil {
				return err
			}
			return sink.Impression(imp)
		}); err != nil {
			return err
		}
	}
	if b := tx.Bucket(bucketAttrib); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			id, pos, ok := bytes.Cut(k, []byte{0})
			if !ok || len(pos) != 2 || len(v) != 1 {
				return fmt.Errorf("attribution %q is damaged", k)
			}
			return sink.Attribution(dump.Attribution{RecommendationID: string(id), Position: int(binary.BigEndian.Uint16(pos)), Flags: v[0]})
		}); err != nil {
			return err
		}
	}
	if b := tx.Bucket(bucketOnline); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			c, err := decodeOnline(k, v)
			if err != nil {
				return err
			}
			return sink.OnlineCount(c)
		}); err != nil {
			return err
		}
	}
	if b := tx.Bucket(bucketExps); b != nil {
		running := tx.Bucket(bucketMeta).Get(keyRunningExperiment)
		if err := b.ForEach(func(k, v []byte) error {
			e, err := record.DecodeExperiment(string(k), v)
			if err != nil {
				return err
			}
			return sink.Experiment(dump.Experiment{Experiment: e, Running: running != nil && bytes.Equal(k, running)})
		}); err != nil {
			return err
		}
	}
	if err := forEachNamed(tx, bucketRules, func(name string, v []byte) error {
		r, err := record.DecodeRule(name, v)
		if err != nil {
			return err
		}
		return sink.Rule(r)
	}); err != nil {
		return err
	}
	return forEachNamed(tx, bucketPlaces, func(name string, v []byte) error {
		p, err := record.DecodePlacement(name, v)
		if err != nil {
			return err
		}
		return sink.Placement(p)
	})
}

func (b *boltSink) Rule(r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return b.tx.Bucket(bucketRules).Put([]byte(r.Name), v)
}

func (b *boltSink) Placement(p api.Placement) error {
	v, err := record.EncodePlacement(p)
	if err != nil {
		return err
	}
	return b.tx.Bucket(bucketPlaces).Put([]byte(p.Name), v)
}

func (b *boltSink) Impression(imp api.Impression) error {
	k, ok := impKey(imp.ID)
	if !ok {
		return fmt.Errorf("impression %q: not an id of api.NewRecommendationID", imp.ID)
	}
	bk := b.tx.Bucket(bucketImps)
	bk.FillPercent = 1 // the dump's order is the log's: every key lands at the end
	return bk.Put(k, encodeImpression(imp))
}

func (b *boltSink) Attribution(a dump.Attribution) error {
	if a.Position < 0 || a.Position > 0xffff {
		return fmt.Errorf("attribution %s: position %d", a.RecommendationID, a.Position)
	}
	k := binary.BigEndian.AppendUint16(append([]byte(a.RecommendationID), 0), uint16(a.Position))
	return b.tx.Bucket(bucketAttrib).Put(k, []byte{a.Flags})
}

func (b *boltSink) OnlineCount(c api.OnlineCount) error {
	if len(c.Day) != 10 {
		return fmt.Errorf("online counter of day %q", c.Day)
	}
	v := make([]byte, 0, 32)
	for _, n := range []int64{c.Lists, c.Impressions, c.Clicks, c.Conversions} {
		v = binary.BigEndian.AppendUint64(v, uint64(n))
	}
	return b.tx.Bucket(bucketOnline).Put(onlineKey(c), v)
}

func (b *boltSink) Experiment(e dump.Experiment) error {
	v, err := record.EncodeExperiment(e.Experiment)
	if err != nil {
		return err
	}
	if err := b.tx.Bucket(bucketExps).Put([]byte(e.Experiment.ID), v); err != nil {
		return err
	}
	if !e.Running {
		return nil
	}
	return b.w.meta.Put(keyRunningExperiment, []byte(e.Experiment.ID))
}

// refuseUnappliedTail fails when the store is open read-only and its
// event log holds events bbolt has not applied: a read of the file alone
// (a dump, a backup) would miss them, and a read-only store cannot apply
// them.
func (s *Store) refuseUnappliedTail() error {
	if !s.readOnly {
		return nil
	}
	if n := s.TailEvents(); n > 0 {
		return fmt.Errorf("the event log %s holds %d acknowledged events not yet applied to %s (its server stopped without applying them): start and stop a server on it once, which applies them, then retry",
			logDir(s.Path()), n, s.Path())
	}
	return nil
}

// forgetRecent drops the index of recent impressions, which the next use
// rebuilds from the log (after a restore wrote the log under it).
func (s *Store) forgetRecent() {
	s.recent.mu.Lock()
	s.recent.built = false
	s.recent.mu.Unlock()
}
