package postgres

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// userRow is a user record being written.
type userRow struct {
	idx   int64
	fresh bool
	t     record.User
}

// pairRow is a pair record being written.
type pairRow struct {
	user, item int64
	fresh      bool // not stored yet
	queued     bool // in the write order
	p          record.Pair
}

type pairKey struct{ user, item int64 }

// AddInteractions stores a batch of events in one transaction: all or
// nothing. Unknown users and items are created. It returns the number of
// events stored.
func (s *Store) AddInteractions(ctx context.Context, evs []api.Interaction) (int, error) {
	verdicts, err := record.Judge(s.policy, evs)
	if err != nil {
		return 0, err
	}
	if len(evs) == 0 {
		return 0, nil
	}
	now := s.now().UnixNano()
	err = s.write(ctx, func(tx pgx.Tx) error {
		return ingest(ctx, tx, evs, verdicts, now)
	})
	if err != nil {
		return 0, err
	}
	s.eventsVersion.Add(1)
	return len(evs), nil
}

// ingest folds the events into their pairs: it reads the users, items and
// pairs the batch touches in three queries, folds in memory in batch
// order, and writes new rows with COPY and changed ones with one UPDATE per
// table.
func ingest(ctx context.Context, tx pgx.Tx, evs []api.Interaction, verdicts []record.Verdict, now int64) error {
	var userIDs, itemIDs []string
	seenU, seenI := map[string]bool{}, map[string]bool{}
	for _, ev := range evs {
		if !seenU[ev.UserID] {
			seenU[ev.UserID] = true
			userIDs = append(userIDs, ev.UserID)
		}
		if !seenI[ev.ItemID] {
			seenI[ev.ItemID] = true
			itemIDs = append(itemIDs, ev.ItemID)
		}
	}
	users := make(map[string]*userRow, len(userIDs))
	rows, _ := tx.Query(ctx, `SELECT id, idx, created, last_seen, items, positives, events FROM users WHERE id = ANY($1)`, userIDs)
	var id string
	var r userRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.idx, &r.t.Created, &r.t.LastSeen, &r.t.Items, &r.t.Positives, &r.t.Events}, func() error {
		row := r
		users[id] = &row
		return nil
	}); err != nil {
		return err
	}
	items := make(map[string]int64, len(itemIDs))
	rows, _ = tx.Query(ctx, `SELECT id, idx FROM items WHERE id = ANY($1)`, itemIDs)
	var idx int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &idx}, func() error { items[id] = idx; return nil }); err != nil {
		return err
	}

	// New users and items take the next indices in the order the batch
	// first names them, as in the bbolt store.
	counters := map[string]int64{}
	var newUsers, newItems []string
	for _, id := range userIDs {
		if users[id] == nil {
			newUsers = append(newUsers, id)
		}
	}
	for _, id := range itemIDs {
		if _, ok := items[id]; !ok {
			newItems = append(newItems, id)
		}
	}
	if len(newUsers) > 0 {
		first, err := nextSeq(ctx, tx, "user_seq", len(newUsers))
		if err != nil {
			return err
		}
		for k, id := range newUsers {
			users[id] = &userRow{idx: first + int64(k), fresh: true}
		}
		counters["users"] += int64(len(newUsers))
	}
	if len(newItems) > 0 {
		first, err := nextSeq(ctx, tx, "item_seq", len(newItems))
		if err != nil {
			return err
		}
		for k, id := range newItems {
			items[id] = first + int64(k)
		}
		counters["items"] += int64(len(newItems))
	}

	// The pairs of known users with known items may exist already.
	var qu, qi []int64
	for _, ev := range evs {
		if u := users[ev.UserID]; !u.fresh {
			qu, qi = append(qu, u.idx), append(qi, items[ev.ItemID])
		}
	}
	pairs := map[pairKey]*pairRow{}
	if len(qu) > 0 {
		rows, _ = tx.Query(ctx, `SELECT p.user_idx, p.item_idx, p.count, p.first_ts, p.last_ts, p.value, p.flags, p.last_type
			FROM pairs p JOIN unnest($1::bigint[], $2::bigint[]) AS q(u, i) ON p.user_idx = q.u AND p.item_idx = q.i`, qu, qi)
		var pr pairRow
		var flags int16
		if _, err := pgx.ForEachRow(rows, []any{&pr.user, &pr.item, &pr.p.Count, &pr.p.First, &pr.p.Last, &pr.p.Value, &flags, &pr.p.LastType}, func() error {
			row := pr
			row.p.Flags = byte(flags)
			pairs[pairKey{row.user, row.item}] = &row
			return nil
		}); err != nil {
			return err
		}
	}

	// Fold, in batch order.
	pop := map[int64]int64{}
	days := map[string]int64{}
	pairDays := map[pairDay]int64{}
	var order []*pairRow
	for k, ev := range evs {
		ts := record.UnixNano(ev.Timestamp)
		if ts == 0 {
			ts = now
		}
		u := users[ev.UserID]
		if u.fresh && u.t.Events == 0 {
			u.t.Created = ts
		}
		item := items[ev.ItemID]
		key := pairKey{u.idx, item}
		p := pairs[key]
		fresh := p == nil
		if fresh {
			p = &pairRow{user: u.idx, item: item, fresh: true}
			pairs[key] = p
			counters["pairs"]++
		}
		if !p.queued {
			p.queued = true
			order = append(order, p)
		}
		d := record.Fold(&u.t, &p.p, fresh, record.Event{TS: ts, Type: ev.Type, Value: ev.Value,
			HasValue: ev.HasValue, Positive: verdicts[k].Positive, Negative: verdicts[k].Negative})
		if d != 0 {
			pop[item] += d
			counters["positives"] += d
		}
		counters["events"]++
		day := record.DayOf(ts)
		days[day]++
		if day != record.DayOf(p.p.First) {
			pairDays[pairDay{key, day}]++
		}
	}
	return writeFold(ctx, tx, users, newUsers, items, newItems, order, pop, counters, days, pairDays, now)
}

type pairDay struct {
	pairKey
	day string
}

// writeFold writes what ingest folded.
func writeFold(ctx context.Context, tx pgx.Tx, users map[string]*userRow, newUsers []string,
	items map[string]int64, newItems []string, order []*pairRow, pop map[int64]int64,
	counters, days map[string]int64, pairDays map[pairDay]int64, now int64) error {
	if len(newUsers) > 0 {
		src := make([][]any, len(newUsers))
		for k, id := range newUsers {
			u := users[id]
			src[k] = []any{u.idx, id, u.t.Created, u.t.LastSeen, u.t.Items, u.t.Positives, u.t.Events}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"users"},
			[]string{"idx", "id", "created", "last_seen", "items", "positives", "events"}, pgx.CopyFromRows(src)); err != nil {
			return err
		}
	}
	var ui, ul, uitems, upos, uev []int64
	for _, u := range users {
		if !u.fresh {
			ui, ul, uitems, upos, uev = append(ui, u.idx), append(ul, u.t.LastSeen), append(uitems, u.t.Items),
				append(upos, u.t.Positives), append(uev, u.t.Events)
		}
	}
	if err := updateUsers(ctx, tx, ui, ul, uitems, upos, uev); err != nil {
		return err
	}
	if len(newItems) > 0 {
		src := make([][]any, len(newItems))
		for k, id := range newItems {
			src[k] = []any{items[id], id, now, now}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"idx", "id", "created", "updated"},
			pgx.CopyFromRows(src)); err != nil {
			return err
		}
	}
	var fresh [][]any
	var ou, oi, oc, of, ol []int64
	var ov []float64
	var ofl []int16
	var ot []string
	for _, p := range order {
		if p.fresh {
			fresh = append(fresh, []any{p.user, p.item, p.p.Count, p.p.First, p.p.Last, p.p.Value, int16(p.p.Flags), p.p.LastType})
			continue
		}
		ou, oi, oc, of, ol = append(ou, p.user), append(oi, p.item), append(oc, p.p.Count), append(of, p.p.First), append(ol, p.p.Last)
		ov, ofl, ot = append(ov, p.p.Value), append(ofl, int16(p.p.Flags)), append(ot, p.p.LastType)
	}
	if len(fresh) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"pairs"},
			[]string{"user_idx", "item_idx", "count", "first_ts", "last_ts", "value", "flags", "last_type"},
			pgx.CopyFromRows(fresh)); err != nil {
			return err
		}
	}
	b := &pgx.Batch{}
	if len(ou) > 0 {
		b.Queue(`UPDATE pairs p SET count = v.c, first_ts = v.f, last_ts = v.l, value = v.v, flags = v.fl, last_type = v.t
			FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::float8[], $7::smallint[], $8::text[])
			AS v(u, i, c, f, l, v, fl, t) WHERE p.user_idx = v.u AND p.item_idx = v.i`, ou, oi, oc, of, ol, ov, ofl, ot)
	}
	queuePop(b, pop)
	queueDays(b, days)
	if len(pairDays) > 0 {
		var pu, pi, pn []int64
		var pd []string
		for k, n := range pairDays {
			pu, pi, pd, pn = append(pu, k.user), append(pi, k.item), append(pd, k.day), append(pn, n)
		}
		b.Queue(`INSERT INTO pair_days (user_idx, item_idx, day, events)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[])
			ON CONFLICT (user_idx, item_idx, day) DO UPDATE SET events = pair_days.events + excluded.events`, pu, pi, pd, pn)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return addCounters(ctx, tx, counters)
}

func updateUsers(ctx context.Context, tx pgx.Tx, idx, lastSeen, items, positives, events []int64) error {
	if len(idx) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE users u SET last_seen = v.l, items = v.i, positives = v.p, events = v.e
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS v(idx, l, i, p, e)
		WHERE u.idx = v.idx`, idx, lastSeen, items, positives, events)
	return err
}

// queuePop adds popularity deltas to items, none below zero.
func queuePop(b *pgx.Batch, pop map[int64]int64) {
	var idx, d []int64
	for i, n := range pop {
		if n != 0 {
			idx, d = append(idx, i), append(d, n)
		}
	}
	if len(idx) > 0 {
		b.Queue(`UPDATE items it SET positives = greatest(it.positives + v.d, 0)
			FROM unnest($1::bigint[], $2::bigint[]) AS v(idx, d) WHERE it.idx = v.idx`, idx, d)
	}
}

// queueDays adds to the per-day counters, dropping days that reach zero.
func queueDays(b *pgx.Batch, days map[string]int64) {
	var ds []string
	var ns []int64
	for d, n := range days {
		if n != 0 {
			ds, ns = append(ds, d), append(ns, n)
		}
	}
	if len(ds) == 0 {
		return
	}
	b.Queue(`INSERT INTO days (day, events) SELECT * FROM unnest($1::text[], $2::bigint[])
		ON CONFLICT (day) DO UPDATE SET events = days.events + excluded.events`, ds, ns)
	b.Queue(`DELETE FROM days WHERE day = ANY($1) AND events <= 0`, ds)
}

// forget deletes the pairs matching cond (a condition on user_idx and
// item_idx with arguments args) and takes them off the users, the items'
// popularity, the counters and the per-day counters.
func forget(ctx context.Context, tx pgx.Tx, cond string, args ...any) error {
	type gone struct {
		user, item, count, first int64
		flags                    int16
	}
	var pairs []gone
	rows, _ := tx.Query(ctx, `DELETE FROM pairs WHERE `+cond+` RETURNING user_idx, item_idx, count, first_ts, flags`, args...)
	var g gone
	if _, err := pgx.ForEachRow(rows, []any{&g.user, &g.item, &g.count, &g.first, &g.flags}, func() error {
		pairs = append(pairs, g)
		return nil
	}); err != nil {
		return err
	}
	later := map[pairKey]int64{}
	days := map[string]int64{}
	rows, _ = tx.Query(ctx, `DELETE FROM pair_days WHERE `+cond+` RETURNING user_idx, item_idx, day, events`, args...)
	var k pairKey
	var day string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&k.user, &k.item, &day, &n}, func() error {
		days[day] -= n
		later[k] += n
		return nil
	}); err != nil {
		return err
	}
	type userDelta struct{ items, events, positives int64 }
	ud := map[int64]*userDelta{}
	pop := map[int64]int64{}
	counters := map[string]int64{}
	for _, p := range pairs {
		d := ud[p.user]
		if d == nil {
			d = &userDelta{}
			ud[p.user] = d
		}
		d.items--
		d.events -= p.count
		counters["pairs"]--
		counters["events"] -= p.count
		if record.Relevant(byte(p.flags)) {
			d.positives--
			pop[p.item]--
			counters["positives"]--
		}
		days[record.DayOf(p.first)] -= max(p.count-later[pairKey{p.user, p.item}], 0)
	}
	b := &pgx.Batch{}
	if len(ud) > 0 {
		var idx, di, de, dp []int64
		for u, d := range ud {
			idx, di, de, dp = append(idx, u), append(di, d.items), append(de, d.events), append(dp, d.positives)
		}
		b.Queue(`UPDATE users u SET items = u.items + v.i, events = u.events + v.e, positives = u.positives + v.p
			FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS v(idx, i, e, p) WHERE u.idx = v.idx`,
			idx, di, de, dp)
	}
	queuePop(b, pop)
	queueDays(b, days)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return addCounters(ctx, tx, counters)
}

// DeleteInteraction forgets the pair (user, item).
func (s *Store) DeleteInteraction(ctx context.Context, userID, itemID string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		u, err := indexOf(ctx, tx, "user", userID)
		if err != nil {
			return err
		}
		i, err := indexOf(ctx, tx, "item", itemID)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pairs WHERE user_idx = $1 AND item_idx = $2)`, u, i).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return api.Errorf(api.CodeNotFound, "user %q has no interaction with item %q", userID, itemID)
		}
		return forget(ctx, tx, "user_idx = $1 AND item_idx = $2", u, i)
	})
	if err == nil {
		s.eventsVersion.Add(1)
	}
	return err
}

// History returns one page of a user's pairs in item-index order.
func (s *Store) History(ctx context.Context, userID string, pg api.Page) ([]api.HistoryEntry, string, error) {
	after, err := record.DecodeIndexCursor(pg.Cursor)
	if err != nil {
		return nil, "", err
	}
	start := int64(0)
	if pg.Cursor != "" {
		if after >= math.MaxInt64 {
			after = math.MaxInt64 - 1 // nothing lies after the last index
		}
		start = int64(after) + 1
	}
	// One statement, so the user and their pairs are read at one moment;
	// a user without pairs (in range) gives one row of NULLs.
	rows, _ := s.pool.Query(ctx, `SELECT p.item_idx, coalesce(i.id, ''), p.count, p.first_ts, p.last_ts, p.value, p.flags, p.last_type
		FROM users u LEFT JOIN pairs p ON p.user_idx = u.idx AND p.item_idx >= $2
		LEFT JOIN items i ON i.idx = p.item_idx
		WHERE u.id = $1 ORDER BY p.item_idx LIMIT $3`, userID, start, pg.Limit+1)
	var out []api.HistoryEntry
	var last []int64
	known := false
	var item, count, first, lastTS *int64
	var id *string
	var value *float64
	var flags *int16
	var typ *string
	_, err = pgx.ForEachRow(rows, []any{&item, &id, &count, &first, &lastTS, &value, &flags, &typ}, func() error {
		known = true
		if item == nil {
			return nil
		}
		p := record.Pair{Count: *count, First: *first, Last: *lastTS, Value: *value, Flags: byte(*flags), LastType: *typ}
		out = append(out, p.API(*id))
		last = append(last, *item)
		return nil
	})
	if err != nil {
		return nil, "", s.errOf(err)
	}
	if !known {
		return nil, "", notFound("user", userID)
	}
	next := ""
	if len(out) > pg.Limit {
		out = out[:pg.Limit]
		lastIdx := uint64(0)
		if pg.Limit > 0 {
			lastIdx = uint64(last[pg.Limit-1])
		}
		next = record.EncodeIndexCursor(lastIdx)
	}
	return out, next, nil
}

// Profile reads a user's live history as dense item indices (sorted).
func (s *Store) Profile(ctx context.Context, userID string) (api.Profile, error) {
	var pr api.Profile
	rows, _ := s.pool.Query(ctx, `SELECT p.item_idx, p.flags, p.first_ts FROM users u LEFT JOIN pairs p ON p.user_idx = u.idx
		WHERE u.id = $1 ORDER BY p.item_idx`, userID)
	var item, first *int64
	var flags *int16
	_, err := pgx.ForEachRow(rows, []any{&item, &flags, &first}, func() error {
		if !pr.Known {
			pr.Known = true
			pr.Consumed, pr.Positive, pr.PositiveDays = []uint32{}, []uint32{}, []int32{}
		}
		if item == nil {
			return nil
		}
		i := uint32(*item)
		pr.Consumed = append(pr.Consumed, i)
		switch f := byte(*flags); {
		case record.Relevant(f):
			pr.Positive = append(pr.Positive, i)
			pr.PositiveDays = append(pr.PositiveDays, record.DayNumber(*first))
		case f&record.FlagNegative != 0:
			pr.Negative = append(pr.Negative, i)
		}
		return nil
	})
	return pr, s.errOf(err)
}
