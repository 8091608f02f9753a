package postgres

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Snapshot reads the training data in one REPEATABLE READ transaction, so
// the pairs, ids and item features are mutually consistent. The users and
// the positive pairs stream out through COPY in binary.
func (s *Store) Snapshot(ctx context.Context) (*api.Snapshot, error) {
	snap := &api.Snapshot{TakenAt: s.now().UTC()}
	err := s.read(ctx, func(tx pgx.Tx) error {
		m, err := counters(ctx, tx)
		if err != nil {
			return err
		}
		snap.Events = m["events"]
		snap.UserIDs = make([]string, m["user_seq"]+1)
		err = copyOut(ctx, tx, `COPY (SELECT idx, id FROM users) TO STDOUT (FORMAT binary)`, func(f [][]byte) error {
			if idx := int64(binary.BigEndian.Uint64(f[0])); idx >= 0 && idx < int64(len(snap.UserIDs)) {
				snap.UserIDs[idx] = string(f[1])
			}
			return nil
		})
		if err != nil {
			return err
		}
		cat, feats, err := readCatalogue(ctx, tx, m["item_seq"], true)
		if err != nil {
			return err
		}
		snap.ItemIDs, snap.Hidden, snap.Categories = cat.ItemIDs, cat.Hidden, cat.Categories
		snap.FeatureNames, snap.Features = record.DenseFeatures(feats)
		// The pairs come in table order and are sorted here into (user,
		// item) order, as the bbolt store gives them: a sort in the server
		// spills to disk at the default work_mem and takes longer than the
		// scan. Each pair carries the day of its first event.
		type dayPair struct {
			key uint64
			day int32
		}
		pairs := make([]dayPair, 0, max(m["positives"], 0))
		// Relevant: reached and not negative (record.Relevant).
		err = copyOut(ctx, tx, fmt.Sprintf(`COPY (SELECT user_idx, item_idx, first_ts FROM pairs WHERE flags & %d = %d)
			TO STDOUT (FORMAT binary)`, record.FlagReached|record.FlagNegative, record.FlagReached),
			func(f [][]byte) error {
				pairs = append(pairs, dayPair{binary.BigEndian.Uint64(f[0])<<32 | binary.BigEndian.Uint64(f[1])&math.MaxUint32,
					record.DayNumber(int64(binary.BigEndian.Uint64(f[2])))})
				return nil
			})
		if err != nil {
			return err
		}
		slices.SortFunc(pairs, func(a, b dayPair) int { return cmp.Compare(a.key, b.key) })
		snap.Users = make([]uint32, len(pairs))
		snap.Items = make([]uint32, len(pairs))
		snap.Days = make([]int32, len(pairs))
		for k, p := range pairs {
			snap.Users[k], snap.Items[k], snap.Days[k] = uint32(p.key>>32), uint32(p.key), p.day
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
	err := s.read(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'item_seq'`).Scan(&seq); err != nil {
			return err
		}
		var err error
		cat, _, err = readCatalogue(ctx, tx, seq, false)
		return err
	})
	return cat, err
}

// ItemFeatures reads every item's features as dense vectors over the sorted
// union of feature names (nil for items without features), by dense index.
func (s *Store) ItemFeatures(ctx context.Context) ([]string, [][]float64, error) {
	var names []string
	var out [][]float64
	err := s.read(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'item_seq'`).Scan(&seq); err != nil {
			return err
		}
		_, feats, err := readCatalogue(ctx, tx, seq, true)
		names, out = record.DenseFeatures(feats)
		return err
	})
	return names, out, err
}

// readCatalogue reads the items, by dense index up to seq.
func readCatalogue(ctx context.Context, tx pgx.Tx, seq int64, withFeatures bool) (*api.Catalogue, []map[string]float64, error) {
	n := seq + 1
	cat := &api.Catalogue{
		ItemIDs:    make([]string, n),
		Index:      make(map[string]uint32, n),
		Hidden:     make([]bool, n),
		Categories: make([][]string, n),
		Popularity: make([]int64, n),
	}
	var feats []map[string]float64
	q := `SELECT idx, id, hidden, categories, positives, NULL::jsonb FROM items`
	if withFeatures {
		feats = make([]map[string]float64, n)
		q = `SELECT idx, id, hidden, categories, positives, features FROM items`
	}
	rows, _ := tx.Query(ctx, q)
	var idx, pop int64
	var id string
	var hidden bool
	var cats []string
	var fj []byte
	_, err := pgx.ForEachRow(rows, []any{&idx, &id, &hidden, &cats, &pop, &fj}, func() error {
		if idx < 0 || idx >= n {
			return nil
		}
		cat.ItemIDs[idx] = id
		cat.Index[id] = uint32(idx)
		cat.Hidden[idx] = hidden
		if len(cats) > 0 {
			cat.Categories[idx] = cats
		}
		cat.Popularity[idx] = pop
		if withFeatures && len(fj) > 0 {
			var f map[string]float64
			if err := json.Unmarshal(fj, &f); err != nil {
				return fmt.Errorf("item %q features: %w", id, err)
			}
			if len(f) > 0 {
				feats[idx] = f
			}
		}
		return nil
	})
	return cat, feats, err
}

// copyOut runs a COPY ... TO STDOUT (FORMAT binary) and calls row with the
// fields of each row as they arrive. The fields alias a buffer: row must
// copy what it keeps.
func copyOut(ctx context.Context, tx pgx.Tx, sql string, row func(fields [][]byte) error) error {
	p := &copyParser{row: row}
	if _, err := tx.Conn().PgConn().CopyTo(ctx, p, sql); err != nil {
		return err
	}
	if !p.done {
		return errors.New("postgres: COPY ended without its trailer")
	}
	return nil
}

// copyParser reads PostgreSQL's binary COPY format
// (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4)
// from the chunks CopyTo writes: a header, then per row an int16 field
// count and per field an int32 length (−1: NULL) and its bytes, then −1.
type copyParser struct {
	row    func([][]byte) error
	buf    []byte
	header bool
	done   bool
	fields [][]byte
}

var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

func (p *copyParser) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	buf, off := p.buf, 0
	if !p.header {
		if len(buf) < 19 {
			return len(b), nil
		}
		if !bytes.Equal(buf[:11], copySignature) {
			return 0, errors.New("postgres: not a binary COPY stream")
		}
		ext := int(binary.BigEndian.Uint32(buf[15:19]))
		if len(buf) < 19+ext {
			return len(b), nil
		}
		off = 19 + ext
		p.header = true
	}
	for !p.done && len(buf)-off >= 2 {
		n := int16(binary.BigEndian.Uint16(buf[off:]))
		if n == -1 {
			p.done = true
			off += 2
			break
		}
		pos, complete := off+2, true
		p.fields = p.fields[:0]
		for range n {
			if len(buf)-pos < 4 {
				complete = false
				break
			}
			l := int(int32(binary.BigEndian.Uint32(buf[pos:])))
			pos += 4
			if l < 0 {
				p.fields = append(p.fields, nil)
				continue
			}
			if len(buf)-pos < l {
				complete = false
				break
			}
			p.fields = append(p.fields, buf[pos:pos+l])
			pos += l
		}
		if !complete {
			break
		}
		if err := p.row(p.fields); err != nil {
			return 0, err
		}
		off = pos
	}
	p.buf = append(p.buf[:0], buf[off:]...)
	return len(b), nil
}

// ItemAttributes reads the labels, features and creation times of the
// items, by dense index.
func (s *Store) ItemAttributes(ctx context.Context) (*api.ItemAttributes, error) {
	var out *api.ItemAttributes
	err := s.read(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'item_seq'`).Scan(&seq); err != nil {
			return err
		}
		n := seq + 1
		out = &api.ItemAttributes{Labels: make([]map[string]string, n), Features: make([]map[string]float64, n), Created: make([]int64, n)}
		rows, _ := tx.Query(ctx, `SELECT idx, id, labels, features, created FROM items`)
		var idx, created int64
		var id string
		var lj, fj []byte
		_, err := pgx.ForEachRow(rows, []any{&idx, &id, &lj, &fj, &created}, func() error {
			if idx < 0 || idx >= n {
				return nil
			}
			out.Created[idx] = created
			if len(lj) > 0 {
				if err := json.Unmarshal(lj, &out.Labels[idx]); err != nil {
					return fmt.Errorf("item %q labels: %w", id, err)
				}
			}
			if len(fj) > 0 {
				if err := json.Unmarshal(fj, &out.Features[idx]); err != nil {
					return fmt.Errorf("item %q features: %w", id, err)
				}
			}
			return nil
		})
		return err
	})
	return out, err
}
