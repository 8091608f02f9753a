package recsys

import (
	"context"
	"fmt"
)

// Kind is what a model registers: how to make one and how its
// hyper-parameters are searched (dissertation §4.7.3), so that a new model
// is one registration beside its code.
type Kind struct {
	// New returns an unfitted model.
	New func() Model
	// Candidates lists the parameters a search fits and validates, in
	// order: the first of equally good ones is chosen, so smaller values
	// of the main parameter come first. c caps k by the data. nil means
	// one fit with the defaults.
	Candidates func(g Grid, c Caps) []Params
	// Search, when not nil, replaces the one fit per candidate: FEBR
	// builds its features once per k and tunes λ on them. Candidates then
	// lists the fits it makes, for progress and reports.
	Search SearchFunc
	// FitGrid, when not nil, fits every candidate of a search at once,
	// sharing work among them (slim counts each item's Gram matrix once
	// for the whole grid), and returns constructors of the fitted models
	// in the candidates' order: the same models as one Fit per candidate
	// with the warm starts a search passes (WarmStart). They are held
	// together, so the grid's models must fit in memory.
	FitGrid func(ctx context.Context, x *Matrix, cands []Params) ([]func() Model, error)
}

// Register adds a model kind to the registry under name, after the built-in
// ones in Names' order, so that New, Load, the hyper-parameter search and
// every list of models (training, evaluation, ?model=) know it.
// Sub-packages (recsys/mf) call it from init; it is not safe to call once
// the registry is in use, and it panics when the name is empty or taken or
// k.New is nil, which is a programming error.
func Register(name string, k Kind) {
	if name == "" || k.New == nil {
		panic("recsys: Register with an empty name or a nil constructor")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("recsys: model %q registered twice", name))
	}
	registry[name] = k
	order = append(order, name)
}

// KindOf returns the registered kind of a model name.
func KindOf(name string) (Kind, error) {
	k, ok := registry[name]
	if !ok {
		return Kind{}, fmt.Errorf("recsys: unknown model %q", name)
	}
	return k, nil
}

// AppendHeader appends the header every encoded model starts with (the
// format version byte and the model name), which Load reads to pick the
// model kind. Models of other packages begin MarshalBinary with it.
func AppendHeader(b []byte, name string) []byte {
	return append(b, newEncoder(name).Bytes()...)
}

// ReadHeader checks that data starts with the header of model name and
// returns the bytes after it.
func ReadHeader(data []byte, name string) ([]byte, error) {
	d := newDecoder(data, name)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return d.Rest(), nil
}
