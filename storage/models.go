package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Model versions: models bucket, key "<name>\x00<version>" → blob and
// "<name>\x00<version>\x00info" → ModelInfo JSON. The active model's name
// is meta "active_model". Versions are "v<sequence>" with a zero-padded
// sequence so that key order is age order.

var keyActiveModel = []byte("active_model")

func modelKey(name, version string) []byte { return []byte(name + "\x00" + version) }
func modelInfoKey(name, version string) []byte {
	return []byte(name + "\x00" + version + "\x00info")
}

// NewModelVersion returns a fresh, increasing version string.
func (s *Store) NewModelVersion(ctx context.Context) (string, error) {
	return s.nextName(ctx, bucketModels, "v%06d")
}

// nextName takes the next sequence number of bucket and formats it.
func (s *Store) nextName(ctx context.Context, bucket []byte, format string) (string, error) {
	var name string
	err := s.update(ctx, func(tx *bolt.Tx) error {
		seq, err := tx.Bucket(bucket).NextSequence()
		name = fmt.Sprintf(format, seq)
		return err
	})
	return name, err
}

// PutModel stores a model version and drops all but the newest
// record.KeepVersions of that name (the serving one is always the newest).
func (s *Store) PutModel(ctx context.Context, info api.ModelInfo, blob []byte) error {
	info.Bytes = len(blob)
	info.Active = false
	meta, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketModels)
		if err := b.Put(modelKey(info.Name, info.Version), record.Seal(blob)); err != nil {
			return err
		}
		if err := b.Put(modelInfoKey(info.Name, info.Version), meta); err != nil {
			return err
		}
		var versions []string
		prefix := []byte(info.Name + "\x00")
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if rest := k[len(prefix):]; !bytes.Contains(rest, []byte{0}) {
				versions = append(versions, string(rest))
			}
		}
		sort.Strings(versions)
		for len(versions) > record.KeepVersions {
			old := versions[0]
			versions = versions[1:]
			if err := b.Delete(modelKey(info.Name, old)); err != nil {
				return err
			}
			if err := b.Delete(modelInfoKey(info.Name, old)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Models lists every stored version, newest first within a name; Active
// marks the newest version of the active model.
func (s *Store) Models(ctx context.Context) ([]api.ModelInfo, error) {
	var out []api.ModelInfo
	err := s.view(ctx, func(tx *bolt.Tx) error {
		active := string(tx.Bucket(bucketMeta).Get(keyActiveModel))
		return tx.Bucket(bucketModels).ForEach(func(k, v []byte) error {
			if !bytes.HasSuffix(k, []byte("\x00info")) {
				return nil
			}
			var info api.ModelInfo
			if err := json.Unmarshal(v, &info); err != nil {
				return fmt.Errorf("storage: model record %q: %w", k, err)
			}
			info.Active = info.Name == active
			out = append(out, info)
			return nil
		})
	})
	sort.Slice(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		return out[a].Version > out[b].Version
	})
	// Only the newest version of the active name is the active one.
	seen := map[string]bool{}
	for k := range out {
		if seen[out[k].Name] {
			out[k].Active = false
		}
		seen[out[k].Name] = true
	}
	return out, err
}

// ModelBlob reads one persisted model.
func (s *Store) ModelBlob(ctx context.Context, name, version string) ([]byte, error) {
	var blob []byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketModels).Get(modelKey(name, version))
		if b == nil {
			return api.Errorf(api.CodeNotFound, "model %s version %s not found", name, version)
		}
		var err error
		blob, err = record.Unseal(s.readValue(tx, b))
		if errors.Is(err, record.ErrCorruptModel) && len(b) >= 1<<20 {
			blob, err = record.Unseal(readMapped(b)) // the map's bytes, in case the file read differed
		}
		if err != nil {
			return fmt.Errorf("model %s version %s: %w", name, version, err)
		}
		return nil
	})
	return blob, err
}

// readValue returns a private copy of v, a value of tx. A large value (a
// model blob) lies in consecutive pages of the file, and is read from it
// with one pread instead of copied out of the map, whose pages the copy
// faults in one by one: loading the 22 models of auto mode at 20M events
// took 2.5–3.0 s of system CPU so, 5.7–7.4 s copying (in a virtual machine,
// with the file cached). The copy from the map remains for small values
// and whenever the read does not give back the value's own bytes.
func (s *Store) readValue(tx *bolt.Tx, v []byte) []byte {
	if len(v) >= 1<<20 {
		if out, ok := s.preadValue(tx, v); ok {
			return out
		}
	}
	return readMapped(v)
}

// preadValue reads v, a value of tx, from the file; ok is false when v is
// not the bytes of the file at its place in the map.
func (s *Store) preadValue(tx *bolt.Tx, v []byte) (out []byte, ok bool) {
	off := int64(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - s.db.Info().Data) // the map starts at the file's offset 0
	if len(v) < 64 || off < 0 || off+int64(len(v)) > tx.Size() {
		return nil, false
	}
	f, err := os.Open(s.db.Path())
	if err != nil {
		return nil, false
	}
	defer f.Close()
	out = make([]byte, len(v))
	// The ends are compared with the map's (two pages touched): a read
	// from the wrong place falls back instead of failing the checksum.
	if _, err := f.ReadAt(out, off); err != nil || !bytes.Equal(out[:64], v[:64]) || !bytes.Equal(out[len(out)-64:], v[len(v)-64:]) {
		return nil, false
	}
	return out, true
}

// SetActiveModel makes name the model that answers by default.
func (s *Store) SetActiveModel(ctx context.Context, name string) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyActiveModel, []byte(name))
	})
}

// ActiveModel returns the active model's name, "" when none.
func (s *Store) ActiveModel(ctx context.Context) (string, error) {
	var name string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		name = string(tx.Bucket(bucketMeta).Get(keyActiveModel))
		return nil
	})
	return name, err
}

// Jobs: key is the job id "j<12-digit sequence>", so key order is age order.

// NewJobID returns a fresh job id.
func (s *Store) NewJobID(ctx context.Context) (string, error) {
	return s.nextName(ctx, bucketJobs, "j%012d")
}

// PutJob creates or replaces a job record.
func (s *Store) PutJob(ctx context.Context, j api.Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).Put([]byte(j.ID), b)
	})
}

// Job reads one job record.
func (s *Store) Job(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJobs).Get([]byte(id))
		if b == nil {
			return api.Errorf(api.CodeNotFound, "job %q not found", id)
		}
		return json.Unmarshal(b, &j)
	})
	return j, err
}

// Jobs lists up to limit jobs, newest first.
func (s *Store) Jobs(ctx context.Context, limit int) ([]api.Job, error) {
	var out []api.Job
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJobs).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var j api.Job
			if err := json.Unmarshal(v, &j); err != nil {
				return fmt.Errorf("storage: job record %q: %w", k, err)
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// RecoverJobs marks every running job failed with reason and returns the
// queued ones, oldest first: at start-up no job can be running, so those
// records belong to a process that stopped, while a queued job never
// started and can run now.
func (s *Store) RecoverJobs(ctx context.Context, reason string) ([]api.Job, int, error) {
	now := s.now().UTC()
	scan := func(tx *bolt.Tx) (queued, fixed []api.Job, err error) {
		err = tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var j api.Job
			if err := json.Unmarshal(v, &j); err != nil {
				return nil // an unreadable record is left for an operator
			}
			switch j.State {
			case api.JobRunning:
				j.State, j.Error, j.FinishedAt = api.JobFailed, reason, &now
				fixed = append(fixed, j)
			case api.JobQueued:
				queued = append(queued, j) // ids sort as they were made
			}
			return nil
		})
		return queued, fixed, err
	}
	// Usually none is running: then no write transaction, which at start
	// would wait for the applier's (the backlog a crash left) to commit.
	var queued, fixed []api.Job
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		queued, fixed, err = scan(tx)
		return err
	})
	if err != nil || len(fixed) == 0 {
		return queued, 0, err
	}
	err = s.update(ctx, func(tx *bolt.Tx) (err error) {
		if queued, fixed, err = scan(tx); err != nil {
			return err
		}
		b := tx.Bucket(bucketJobs)
		for _, j := range fixed {
			v, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(j.ID), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return queued, len(fixed), nil
}

// Reports: key is the report id "r<12-digit sequence>".

// PutReport stores a report, giving it an id and a time when it has none.
func (s *Store) PutReport(ctx context.Context, r *api.Report) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReports)
		if r.ID == "" {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			r.ID = fmt.Sprintf("r%012d", seq)
		}
		if r.CreatedAt.IsZero() {
			r.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
		}
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return b.Put([]byte(r.ID), v)
	})
}

// Report reads one report.
func (s *Store) Report(ctx context.Context, id string) (*api.Report, error) {
	var r api.Report
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReports).Get([]byte(id))
		if b == nil {
			return api.Errorf(api.CodeNotFound, "evaluation %q not found", id)
		}
		return json.Unmarshal(b, &r)
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Reports lists every report, newest first.
func (s *Store) Reports(ctx context.Context) ([]*api.Report, error) {
	var out []*api.Report
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketReports).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var r api.Report
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("storage: report %q: %w", k, err)
			}
			out = append(out, &r)
		}
		return nil
	})
	return out, err
}
