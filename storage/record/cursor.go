package record

import (
	"encoding/base64"
	"encoding/binary"

	"github.com/recsys-engine/recsys/api"
)

// The listing cursors, the same from either store: a cursor one store
// issued pages the other's copy of the data alike.

// EncodeIndexCursor is the history cursor: the dense index of the last
// item of the page.
func EncodeIndexCursor(idx uint64) string {
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, idx))
}

// DecodeIndexCursor reads EncodeIndexCursor's cursor; "" is 0.
func DecodeIndexCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != 8 {
		return 0, badCursor()
	}
	return binary.BigEndian.Uint64(b), nil
}

// EncodeIDCursor is the catalogue and user listings' cursor: the last id
// of the page.
func EncodeIDCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// DecodeIDCursor reads EncodeIDCursor's cursor.
func DecodeIDCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", badCursor()
	}
	return string(b), nil
}

func badCursor() error { return api.FieldError("cursor", "is not a cursor this server issued") }
