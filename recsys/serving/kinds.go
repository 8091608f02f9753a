package serving

import (
	"fmt"
	"slices"

	"recsys/recsys"
	_ "recsys/recsys/febr" // registers febr, its variants and febr-blend, which persisted models may be
	_ "recsys/recsys/mf"   // registers bpr, wrmf and mfauc, which persisted models may be
)

// kinds holds the decoder of every kind of served model that is not a
// recommender, by name; kindOrder is their registration order.
var (
	kinds     = map[string]func([]byte) (Artefact, error){}
	kindOrder []string
)

// RegisterKind adds a kind of served model that is not a recommender (the
// content metric, content.go): models persisted under name are read back
// by decode. Recommenders need no call here: package recsys's registry
// (recsys.Register) names them and recsys.Load reads them. The trainer of
// the kind registers in package jobs. Like recsys.Register it is for init
// functions, and panics when the name is empty or taken.
func RegisterKind(name string, decode func([]byte) (Artefact, error)) {
	if name == "" || decode == nil {
		panic("serving: RegisterKind with an empty name or a nil decoder")
	}
	if _, dup := kinds[name]; dup || slices.Contains(recsys.Names(), name) {
		panic(fmt.Sprintf("serving: kind %q registered twice", name))
	}
	kinds[name] = decode
	kindOrder = append(kindOrder, name)
}

// Kinds lists the registered kinds that are not recommenders, in
// registration order.
func Kinds() []string { return slices.Clone(kindOrder) }

// Decode reads the persisted bytes of the model called name: by the
// decoder its kind registered, else as a recommender by recsys.Load, which
// finds the model in the bytes' header.
func Decode(name string, blob []byte) (Artefact, error) {
	if decode, ok := kinds[name]; ok {
		return decode(blob)
	}
	m, err := recsys.Load(blob)
	if err != nil {
		return nil, err
	}
	return m, nil
}
