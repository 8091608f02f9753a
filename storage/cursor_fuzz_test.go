package storage

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// FuzzPageCursor feeds arbitrary cursors to the two paged reads (GET /items
// and GET /users/{id}/interactions): a cursor is refused with a 400-class
// error naming the field, or it yields a page that lies strictly after the
// position it encodes; never an internal error, never a panic.
func FuzzPageCursor(f *testing.F) {
	s := mustOpenStore(f)
	var items []api.Item
	for k := range 12 {
		items = append(items, api.Item{ID: fmt.Sprintf("item-%02d", k)})
		mustAdd(f, s, ev("u", fmt.Sprintf("item-%02d", k), "view"))
	}
	if err := s.PutItems(context.Background(), items); err != nil {
		f.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	for _, c := range []string{"", enc([]byte("item-05")), enc(u64(3)), enc(u64(math.MaxUint64)), "!!", "AAAA", enc([]byte{0}), "=", "aXRlbS0wNQ=="} {
		f.Add(c)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, cursor string) {
		its, _, err := s.Items(ctx, api.Page{Cursor: cursor, Limit: 5})
		switch {
		case err != nil && api.ErrorCode(err) != api.CodeInvalid:
			t.Fatalf("Items cursor %q: %v", cursor, err)
		case err == nil && cursor != "":
			after, _ := base64.RawURLEncoding.DecodeString(cursor)
			for _, it := range its {
				if it.ID <= string(after) {
					t.Fatalf("Items after %q returned %q", after, it.ID)
				}
			}
		}
		hist, _, err := s.History(ctx, "u", api.Page{Cursor: cursor, Limit: 5})
		switch {
		case err != nil && api.ErrorCode(err) != api.CodeInvalid:
			t.Fatalf("History cursor %q: %v", cursor, err)
		case err == nil && cursor != "":
			b, _ := base64.RawURLEncoding.DecodeString(cursor)
			after := binary.BigEndian.Uint64(b)
			// Item indices follow first-seen order: item-NN has index NN+1.
			for _, h := range hist {
				var n uint64
				fmt.Sscanf(h.ItemID, "item-%d", &n)
				if n+1 <= after {
					t.Fatalf("History after index %d returned %s", after, h.ItemID)
				}
			}
		}
	})
}
