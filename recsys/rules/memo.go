package rules

import "sync/atomic"

// An expression that does not read age_days gives the same answer for an
// item until the item changes, so a Program remembers its answers over
// one version of the catalogue: two bits an item, 16 items a word, read
// and written without locks by every request that evaluates it.

// Outcome is a remembered evaluation of one item.
type Outcome uint8

// The outcomes; Unknown is an item not evaluated yet over this version.
const (
	Unknown Outcome = iota
	True
	False
	Failed // the expression failed on the item at run time
)

// Memo holds a program's outcomes over one version of the catalogue.
type Memo struct {
	version any
	words   []atomic.Uint32
}

// itemNoAge is Item without its age: an expression that compiles against
// it does not depend on the time it is evaluated at.
type itemNoAge struct {
	ID         string             `expr:"id"`
	Categories []string           `expr:"categories"`
	Labels     map[string]string  `expr:"labels"`
	Features   map[string]float64 `expr:"features"`
}

// Memo returns p's outcomes over the catalogue version named by version
// (any comparable value that changes whenever an item's attributes
// change), of n items, starting empty when the version is new; nil for an
// expression that reads age_days, whose answers change with the clock.
func (p *Program) Memo(version any, n int) *Memo {
	if !p.timeless {
		return nil
	}
	if m := p.memo.Load(); m != nil && m.version == version && len(m.words)*16 >= n {
		return m
	}
	m := &Memo{version: version, words: make([]atomic.Uint32, (n+15)/16)}
	p.memo.Store(m)
	return m
}

// Get returns the outcome of item i.
func (m *Memo) Get(i uint32) Outcome {
	if int(i/16) >= len(m.words) {
		return Unknown
	}
	return Outcome(m.words[i/16].Load() >> (2 * (i % 16)) & 3)
}

// Set records the outcome of item i.
func (m *Memo) Set(i uint32, o Outcome) {
	if int(i/16) >= len(m.words) {
		return
	}
	w, shift := &m.words[i/16], 2*(i%16)
	for {
		old := w.Load()
		next := old&^(3<<shift) | uint32(o)<<shift
		if old == next || w.CompareAndSwap(old, next) {
			return
		}
	}
}
