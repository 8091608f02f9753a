package recsys

import "fmt"

// Register adds a model kind to the registry under name, after the built-in
// ones in Names' order, so that New, Load and every list of models (training,
// evaluation, ?model=) know it. Sub-packages (recsys/mf) call it from init;
// it is not safe to call once the registry is in use, and it panics when the
// name is empty or taken, which is a programming error.
func Register(name string, f func() Model) {
	if name == "" || f == nil {
		panic("recsys: Register with an empty name or a nil constructor")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("recsys: model %q registered twice", name))
	}
	registry[name] = f
	order = append(order, name)
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
