package febr

import (
	"fmt"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// MarshalBinary writes θ, every base's parameters and every base model.
func (m *Blend) MarshalBinary() ([]byte, error) {
	if m.bases == nil {
		return nil, fmt.Errorf("febr: %s is not fitted", BlendName)
	}
	e := newEncoder(BlendName)
	e.Uvarint(uint64(m.nItems))
	e.Uvarint(uint64(len(m.bases)))
	for b, base := range m.bases {
		blob, err := base.MarshalBinary()
		if err != nil {
			return nil, err
		}
		p := m.params[b]
		e.Float64(m.theta[b])
		e.Uvarint(uint64(p.K))
		e.Float64(p.L1)
		e.Float64(p.L2)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range p.Extra {
				if !yield(k) {
					return
				}
			}
		})
		e.Uvarint(uint64(len(keys)))
		for _, k := range keys {
			e.Str(k)
			e.Float64(p.Extra[k])
		}
		e.Uvarint(uint64(len(blob)))
		e.Raw(blob)
	}
	return e.Bytes(), nil
}

func (m *Blend) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, BlendName)
	nItems := d.Bounded(1 << 32)
	n := d.Bounded(64)
	var (
		names  []string
		bases  []recsys.Model
		theta  []float64
		params []recsys.Params
	)
	for range n {
		if d.Err() != nil {
			break
		}
		w := d.Finite()
		p := recsys.Params{K: d.Bounded(1 << 32), L1: d.Finite(), L2: d.Finite()}
		for range d.Bounded(64) {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			k := d.Str()
			p.Extra[k] = d.Finite()
		}
		blob := d.Raw(d.Count(1))
		if d.Err() != nil {
			break
		}
		base, err := recsys.Load(blob)
		if err != nil {
			return err
		}
		if base.Name() == BlendName {
			return errCorrupt
		}
		names, bases, theta, params = append(names, base.Name()), append(bases, base), append(theta, w), append(params, p)
	}
	if err := d.Finish(); err != nil {
		return err
	}
	if n == 0 {
		return errCorrupt
	}
	m.set(names, bases, params, theta, nItems)
	m.info = BlendInfo{}
	return nil
}
