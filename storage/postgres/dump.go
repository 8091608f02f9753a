package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/record"
)

var _ dump.Dumper = (*Store)(nil)

// Dump writes the whole store to sink from one REPEATABLE READ
// transaction, in the order dump.Sink describes.
func (s *Store) Dump(ctx context.Context, sink dump.Sink) error {
	return s.read(ctx, func(tx pgx.Tx) error {
		m, err := counters(ctx, tx)
		if err != nil {
			return err
		}
		head := dump.Head{Counters: map[string]int64{}}
		for _, n := range append(append([]string(nil), dump.CounterNames...), dump.SeqNames...) {
			head.Counters[n] = m[n]
		}
		if head.Active, err = setting(ctx, tx, "active_model"); err != nil {
			return err
		}
		if err := sink.Head(head); err != nil {
			return err
		}
		var u dump.User
		rows, _ := tx.Query(ctx, `SELECT idx, id, created, last_seen, items, positives, events FROM users ORDER BY idx`)
		if _, err := pgx.ForEachRow(rows, []any{&u.Idx, &u.ID, &u.T.Created, &u.T.LastSeen, &u.T.Items, &u.T.Positives, &u.T.Events},
			func() error { return sink.User(u) }); err != nil {
			return err
		}
		var r itemRow
		rows, _ = tx.Query(ctx, `SELECT `+itemColumns+` FROM items ORDER BY idx`)
		if _, err := pgx.ForEachRow(rows, r.dest(), func() error {
			it, err := r.toAPI()
			if err != nil {
				return err
			}
			return sink.Item(dump.Item{Idx: uint64(r.idx), ID: it.ID, Features: it.Features, Categories: it.Categories,
				Labels: it.Labels, Hidden: it.Hidden, Created: r.created, Updated: r.updated, Positive: r.posit})
		}); err != nil {
			return err
		}
		var p dump.Pair
		var flags int16
		rows, _ = tx.Query(ctx, `SELECT user_idx, item_idx, count, first_ts, last_ts, value, flags, last_type FROM pairs ORDER BY user_idx, item_idx`)
		if _, err := pgx.ForEachRow(rows, []any{&p.User, &p.Item, &p.P.Count, &p.P.First, &p.P.Last, &p.P.Value, &flags, &p.P.LastType},
			func() error { p.P.Flags = byte(flags); return sink.Pair(p) }); err != nil {
			return err
		}
		var pd dump.PairDay
		rows, _ = tx.Query(ctx, `SELECT user_idx, item_idx, day, events FROM pair_days ORDER BY user_idx, item_idx, day`)
		if _, err := pgx.ForEachRow(rows, []any{&pd.User, &pd.Item, &pd.Day, &pd.Events}, func() error { return sink.PairDay(pd) }); err != nil {
			return err
		}
		var d dump.Day
		rows, _ = tx.Query(ctx, `SELECT day, events FROM days WHERE events > 0 ORDER BY day`)
		if _, err := pgx.ForEachRow(rows, []any{&d.Day, &d.Events}, func() error { return sink.Day(d) }); err != nil {
			return err
		}
		var info, sealed []byte
		rows, _ = tx.Query(ctx, `SELECT m.info, (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM model_chunks c
			WHERE c.name = m.name AND c.version = m.version) FROM models m ORDER BY m.name, m.version`)
		if _, err := pgx.ForEachRow(rows, []any{&info, &sealed}, func() error {
			var mi api.ModelInfo
			if err := json.Unmarshal(info, &mi); err != nil {
				return fmt.Errorf("model record: %w", err)
			}
			mi.Active = false
			return sink.Model(dump.Model{Info: mi, Sealed: append([]byte{}, sealed...)})
		}); err != nil {
			return err
		}
		var rec []byte
		rows, _ = tx.Query(ctx, `SELECT record FROM jobs ORDER BY id`)
		if _, err := pgx.ForEachRow(rows, []any{&rec}, func() error {
			var j api.Job
			if err := json.Unmarshal(rec, &j); err != nil {
				return err
			}
			return sink.Job(j)
		}); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT record FROM reports ORDER BY id`)
		if _, err = pgx.ForEachRow(rows, []any{&rec}, func() error {
			var r api.Report
			if err := json.Unmarshal(rec, &r); err != nil {
				return err
			}
			return sink.Report(r)
		}); err != nil {
			return err
		}
		return dumpOnline(ctx, tx, sink)
	})
}

// dumpOnline writes the online tables to sink, in the order of the bbolt
// store's keys: ids and names compare byte-wise (COLLATE "C"), and a
// recommendation id starts with its time.
func dumpOnline(ctx context.Context, tx pgx.Tx, sink dump.Sink) error {
	var imp api.Impression
	var at int64
	rows, _ := tx.Query(ctx, `SELECT `+impressionColumns+` FROM impressions ORDER BY id`)
	if _, err := pgx.ForEachRow(rows, []any{&imp.ID, &imp.UserID, &at, &imp.Model, &imp.ModelVersion, &imp.Experiment, &imp.Arm, &imp.Items, &imp.Placement},
		func() error { imp.At = record.FromNano(at); return sink.Impression(imp) }); err != nil {
		return err
	}
	var a dump.Attribution
	var flags int16
	rows, _ = tx.Query(ctx, `SELECT id, position, flags FROM attributions ORDER BY id, position`)
	if _, err := pgx.ForEachRow(rows, []any{&a.RecommendationID, &a.Position, &flags},
		func() error { a.Flags = byte(flags); return sink.Attribution(a) }); err != nil {
		return err
	}
	var c api.OnlineCount
	rows, _ = tx.Query(ctx, `SELECT day, model, experiment, arm, placement, lists, impressions, clicks, conversions
		FROM online_counts ORDER BY day, model, experiment, arm, placement`)
	if _, err := pgx.ForEachRow(rows, []any{&c.Day, &c.Model, &c.Experiment, &c.Arm, &c.Placement, &c.Lists, &c.Impressions, &c.Clicks, &c.Conversions},
		func() error { return sink.OnlineCount(c) }); err != nil {
		return err
	}
	var id string
	var running bool
	var rec []byte
	rows, _ = tx.Query(ctx, `SELECT id, running, record FROM experiments ORDER BY id`)
	_, err := pgx.ForEachRow(rows, []any{&id, &running, &rec}, func() error {
		e, err := record.DecodeExperiment(id, rec)
		if err != nil {
			return err
		}
		return sink.Experiment(dump.Experiment{Experiment: e, Running: running})
	})
	if err != nil {
		return err
	}
	var name string
	rows, _ = tx.Query(ctx, `SELECT name, record FROM rules ORDER BY name`)
	if _, err := pgx.ForEachRow(rows, []any{&name, &rec}, func() error {
		r, err := record.DecodeRule(name, rec)
		if err != nil {
			return err
		}
		return sink.Rule(r)
	}); err != nil {
		return err
	}
	rows, _ = tx.Query(ctx, `SELECT name, record FROM placements ORDER BY name`)
	_, err = pgx.ForEachRow(rows, []any{&name, &rec}, func() error {
		p, err := record.DecodePlacement(name, rec)
		if err != nil {
			return err
		}
		return sink.Placement(p)
	})
	return err
}

// Restore fills an empty store with a dump, in one transaction; rows go in
// through COPY, copyBatch at a time.
func (s *Store) Restore(ctx context.Context, fill func(dump.Sink) error) error {
	err := s.writeCatalogue(ctx, func(tx pgx.Tx) error {
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM counters WHERE name NOT IN ('writer', 'catalogue') AND value <> 0)
			OR EXISTS (SELECT 1 FROM models) OR EXISTS (SELECT 1 FROM jobs) OR EXISTS (SELECT 1 FROM reports)
			OR EXISTS (SELECT 1 FROM settings) OR EXISTS (SELECT 1 FROM impressions) OR EXISTS (SELECT 1 FROM attributions)
			OR EXISTS (SELECT 1 FROM online_counts) OR EXISTS (SELECT 1 FROM experiments)
			OR EXISTS (SELECT 1 FROM rules) OR EXISTS (SELECT 1 FROM placements)`).Scan(&used); err != nil {
			return err
		}
		if used {
			return dump.ErrNotEmpty
		}
		sink := &pgSink{ctx: ctx, tx: tx, buf: map[string][][]any{}}
		if err := fill(sink); err != nil {
			return err
		}
		return sink.flushAll()
	})
	if err == nil {
		s.itemsVersion.Add(1)
		s.eventsVersion.Add(1)
	}
	return err
}

// copyBatch is how many rows a restore sends in one COPY.
const copyBatch = 10000

// pgTables are the columns COPY fills per table, in the order pgSink
// buffers them.
var pgTables = map[string][]string{
	"users":     {"idx", "id", "created", "last_seen", "items", "positives", "events"},
	"items":     {"idx", "id", "features", "categories", "labels", "hidden", "created", "updated", "positives"},
	"pairs":     {"user_idx", "item_idx", "count", "first_ts", "last_ts", "value", "flags", "last_type"},
	"pair_days": {"user_idx", "item_idx", "day", "events"},
	"days":      {"day", "events"},
	"jobs":      {"id", "state", "record"},
	"reports":   {"id", "record"},

	"impressions":   {"id", "user_id", "at", "model", "model_version", "experiment", "arm", "items", "placement"},
	"attributions":  {"id", "position", "flags"},
	"online_counts": {"day", "model", "experiment", "arm", "placement", "lists", "impressions", "clicks", "conversions"},
	"experiments":   {"id", "running", "record"},
	"rules":         {"name", "record"},
	"placements":    {"name", "record"},
}

// pgSink writes dump records into a transaction.
type pgSink struct {
	ctx context.Context
	tx  pgx.Tx
	buf map[string][][]any
}

func (p *pgSink) add(table string, row ...any) error {
	p.buf[table] = append(p.buf[table], row)
	if len(p.buf[table]) >= copyBatch {
		return p.flush(table)
	}
	return nil
}

func (p *pgSink) flush(table string) error {
	rows := p.buf[table]
	if len(rows) == 0 {
		return nil
	}
	p.buf[table] = rows[:0]
	_, err := p.tx.CopyFrom(p.ctx, pgx.Identifier{table}, pgTables[table], pgx.CopyFromRows(rows))
	return err
}

// flushAll sends what is buffered, parents before children.
func (p *pgSink) flushAll() error {
	for _, t := range []string{"users", "items", "pairs", "pair_days", "days", "jobs", "reports",
		"impressions", "attributions", "online_counts", "experiments", "rules", "placements"} {
		if err := p.flush(t); err != nil {
			return err
		}
	}
	return nil
}

func (p *pgSink) Head(h dump.Head) error {
	names, vals := []string{}, []int64{}
	for n, v := range h.Counters {
		names, vals = append(names, n), append(vals, v)
	}
	if _, err := p.tx.Exec(p.ctx, `UPDATE counters c SET value = v.value
		FROM unnest($1::text[], $2::bigint[]) AS v(name, value) WHERE c.name = v.name`, names, vals); err != nil {
		return err
	}
	if h.Active == "" {
		return nil
	}
	_, err := p.tx.Exec(p.ctx, `INSERT INTO settings (name, value) VALUES ('active_model', $1)`, h.Active)
	return err
}

func (p *pgSink) User(u dump.User) error {
	return p.add("users", int64(u.Idx), u.ID, u.T.Created, u.T.LastSeen, u.T.Items, u.T.Positives, u.T.Events)
}

func (p *pgSink) Item(it dump.Item) error {
	c, err := columnsOf(api.Item{Features: it.Features, Categories: it.Categories, Labels: it.Labels})
	if err != nil {
		return err
	}
	return p.add("items", int64(it.Idx), it.ID, c.features, c.categories, c.labels, it.Hidden, it.Created, it.Updated, it.Positive)
}

func (p *pgSink) Pair(x dump.Pair) error {
	return p.add("pairs", int64(x.User), int64(x.Item), x.P.Count, x.P.First, x.P.Last, x.P.Value, int16(x.P.Flags), x.P.LastType)
}

func (p *pgSink) PairDay(x dump.PairDay) error {
	return p.add("pair_days", int64(x.User), int64(x.Item), x.Day, x.Events)
}

func (p *pgSink) Day(d dump.Day) error { return p.add("days", d.Day, d.Events) }

func (p *pgSink) Model(m dump.Model) error {
	m.Info.Active = false
	info, err := json.Marshal(m.Info)
	if err != nil {
		return err
	}
	return insertModel(p.ctx, p.tx, m.Info.Name, m.Info.Version, info, m.Sealed)
}

func (p *pgSink) Job(j api.Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return p.add("jobs", j.ID, j.State, b)
}

func (p *pgSink) Report(r api.Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return p.add("reports", r.ID, b)
}

func (p *pgSink) Impression(imp api.Impression) error {
	return p.add("impressions", imp.ID, imp.UserID, record.UnixNano(imp.At), imp.Model, imp.ModelVersion, imp.Experiment, imp.Arm, imp.Items, imp.Placement)
}

func (p *pgSink) Attribution(a dump.Attribution) error {
	return p.add("attributions", a.RecommendationID, int32(a.Position), int16(a.Flags))
}

func (p *pgSink) OnlineCount(c api.OnlineCount) error {
	return p.add("online_counts", c.Day, c.Model, c.Experiment, c.Arm, c.Placement, c.Lists, c.Impressions, c.Clicks, c.Conversions)
}

func (p *pgSink) Experiment(e dump.Experiment) error {
	v, err := record.EncodeExperiment(e.Experiment)
	if err != nil {
		return err
	}
	return p.add("experiments", e.Experiment.ID, e.Running, v)
}

func (p *pgSink) Rule(r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return p.add("rules", r.Name, v)
}

func (p *pgSink) Placement(pl api.Placement) error {
	v, err := record.EncodePlacement(pl)
	if err != nil {
		return err
	}
	return p.add("placements", pl.Name, v)
}
