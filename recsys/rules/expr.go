// Package rules evaluates the filter expressions of requests and stored
// rules over the items of the catalogue, and applies the actions of the
// business rules (exclude, boost, bury, pin) to a ranked candidate pool.
// It knows nothing of HTTP or the stores; docs/rules.md describes the
// language and the order in which rules, diversity and paging apply.
package rules

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	lru "github.com/hashicorp/golang-lru/v2"
)

// MaxExpressionBytes bounds the text of one expression.
const MaxExpressionBytes = 4096

// maxNodes bounds the syntax tree of one expression, so that compiling
// and running it stay cheap.
const maxNodes = 500

// Item is what an expression sees of one item: the names it may use are
// those of the expr tags.
type Item struct {
	ID         string             `expr:"id"`
	Categories []string           `expr:"categories"`
	Labels     map[string]string  `expr:"labels"`
	Features   map[string]float64 `expr:"features"`
	// AgeDays is the time since the item entered the catalogue, in days.
	AgeDays float64 `expr:"age_days"`
}

// Program is a compiled expression, safe for concurrent use.
type Program struct {
	src string
	p   *vm.Program
	// timeless: the expression does not read age_days, so its answers
	// can be remembered in memo (memo.go).
	timeless bool
	memo     atomic.Pointer[Memo]
}

// Source returns the text the program was compiled from.
func (p *Program) Source() string { return p.src }

// Error is an expression that does not compile: Line and Column (both
// from 1, the column counted in characters) locate the problem.
type Error struct {
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// Compile compiles src, which must be a boolean expression over Item.
func Compile(src string) (*Program, error) {
	if len(src) > MaxExpressionBytes {
		return nil, &Error{Line: 1, Column: 1, Message: fmt.Sprintf("expression is %d bytes, more than %d", len(src), MaxExpressionBytes)}
	}
	if !utf8.ValidString(src) {
		return nil, &Error{Line: 1, Column: 1, Message: "expression is not valid UTF-8"}
	}
	p, err := expr.Compile(src, expr.Env(Item{}), expr.AsBool(), expr.MaxNodes(maxNodes))
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return nil, &Error{Line: max(fe.Line, 1), Column: fe.Column + 1, Message: fe.Message}
		}
		return nil, &Error{Line: 1, Column: 1, Message: err.Error()}
	}
	_, ageErr := expr.Compile(src, expr.Env(itemNoAge{}), expr.AsBool(), expr.MaxNodes(maxNodes))
	return &Program{src: src, p: p, timeless: ageErr == nil}, nil
}

// Evaluator runs programs on items. It reuses one virtual machine, so it
// is for one goroutine at a time.
type Evaluator struct {
	vm vm.VM
}

// Match reports whether item satisfies p. An error is a failure of this
// item alone (a label that is not a number, an index out of range); the
// caller decides what it means.
func (e *Evaluator) Match(p *Program, item *Item) (bool, error) {
	out, err := e.vm.Run(p.p, item)
	if err != nil {
		return false, err
	}
	ok, isBool := out.(bool)
	if !isBool {
		return false, fmt.Errorf("expression gave %T, not a boolean", out)
	}
	return ok, nil
}

// DefaultCacheSize is how many distinct compiled expressions a Cache
// keeps.
const DefaultCacheSize = 512

// Cache compiles each distinct expression once and keeps the most
// recently used ones. Expressions that fail to compile are not kept.
type Cache struct {
	lru *lru.Cache[string, *Program]
}

// NewCache returns a cache of at most size programs (DefaultCacheSize
// when size ≤ 0).
func NewCache(size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c, err := lru.New[string, *Program](size)
	if err != nil {
		panic(err) // only for size ≤ 0, ruled out above
	}
	return &Cache{lru: c}
}

// Compile returns the program of src, compiling it on first use.
func (c *Cache) Compile(src string) (*Program, error) {
	if p, ok := c.lru.Get(src); ok {
		return p, nil
	}
	p, err := Compile(src)
	if err != nil {
		return nil, err
	}
	c.lru.Add(src, p)
	return p, nil
}

// Len is the number of programs kept.
func (c *Cache) Len() int { return c.lru.Len() }
