package dump

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strings"

	"github.com/recsys-engine/recsys/api"
)

// Sum counts and checksums a dump as it passes to next (nil: nowhere):
// SHA-256 over each record's kind and JSON encoding, which is canonical
// (struct fields in order, map keys sorted, floats exact).
type Sum struct {
	next   Sink
	h      hash.Hash
	Counts map[string]int64
}

// NewSum returns a Sum passing records on to next.
func NewSum(next Sink) *Sum {
	return &Sum{next: next, h: sha256.New(), Counts: map[string]int64{}}
}

// Sum is the hex checksum of the records so far.
func (d *Sum) Sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// String lists the counts in dump order.
func (d *Sum) String() string {
	var parts []string
	for _, k := range Kinds {
		parts = append(parts, fmt.Sprintf("%d %s", d.Counts[k], k))
	}
	return strings.Join(parts, ", ")
}

func (d *Sum) add(kind string, v any, pass func() error) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d.h.Write([]byte(kind))
	d.h.Write([]byte{'\n'})
	d.h.Write(b)
	d.h.Write([]byte{'\n'})
	d.Counts[kind]++
	if d.next == nil {
		return nil
	}
	return pass()
}

func (d *Sum) Head(h Head) error {
	return d.add("head", h, func() error { return d.next.Head(h) })
}
func (d *Sum) User(u User) error {
	return d.add("users", u, func() error { return d.next.User(u) })
}
func (d *Sum) Item(it Item) error {
	return d.add("items", it, func() error { return d.next.Item(it) })
}
func (d *Sum) Pair(p Pair) error {
	return d.add("pairs", p, func() error { return d.next.Pair(p) })
}
func (d *Sum) PairDay(p PairDay) error {
	return d.add("pair_days", p, func() error { return d.next.PairDay(p) })
}
func (d *Sum) Day(x Day) error {
	return d.add("days", x, func() error { return d.next.Day(x) })
}
func (d *Sum) Model(m Model) error {
	return d.add("models", m, func() error { return d.next.Model(m) })
}
func (d *Sum) Job(j api.Job) error {
	return d.add("jobs", j, func() error { return d.next.Job(j) })
}
func (d *Sum) Report(r api.Report) error {
	return d.add("reports", r, func() error { return d.next.Report(r) })
}
func (d *Sum) Impression(imp api.Impression) error {
	return d.add("impressions", imp, func() error { return d.next.Impression(imp) })
}
func (d *Sum) Attribution(a Attribution) error {
	return d.add("attributions", a, func() error { return d.next.Attribution(a) })
}
func (d *Sum) OnlineCount(c api.OnlineCount) error {
	return d.add("online_counts", c, func() error { return d.next.OnlineCount(c) })
}
func (d *Sum) Experiment(e Experiment) error {
	return d.add("experiments", e, func() error { return d.next.Experiment(e) })
}
func (d *Sum) Rule(r api.Rule) error {
	return d.add("rules", r, func() error { return d.next.Rule(r) })
}
func (d *Sum) Placement(p api.Placement) error {
	return d.add("placements", p, func() error { return d.next.Placement(p) })
}
