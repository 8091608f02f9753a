package record

import (
	"bytes"
	"cmp"
	"encoding/binary"
)

// Listings of users and items (GET /users, GET /items) are in natural
// order: a run of ASCII digits compares as the number it spells, the rest
// byte by byte, so 2 < 10 < 100 and a2 < a10 < b1. Both stores order by
// NaturalKey, whose byte order is that order, and break ties (007 and 7)
// by the id's bytes: the bbolt store keys its order buckets by OrderKey,
// PostgreSQL indexes (recsys_natural_key(id), id) with the same key
// computed in SQL (storage/postgres/migrations/004_natural_order.sql).

// naturalDigit marks a run of digits in a NaturalKey. It is '0' itself:
// outside runs a key holds the id's other bytes, never a digit, so a
// run sorts against them where its first digit would.
const naturalDigit = '0'

// NaturalKey is the key whose byte order is the natural order of ids. Each
// run of ASCII digits becomes naturalDigit, the number of its significant
// digits (leading zeros dropped) as two big-endian bytes, and those
// digits, so a longer number sorts after a shorter one and numbers of one
// length by their digits; every other byte is itself. Ids are at most
// api.MaxIDBytes long, so a run's length always fits.
func NaturalKey(id string) []byte {
	return appendNaturalKey(make([]byte, 0, len(id)+8), id)
}

func appendNaturalKey(dst []byte, id string) []byte {
	for k := 0; k < len(id); {
		if !isDigit(id[k]) {
			dst = append(dst, id[k])
			k++
			continue
		}
		end := k
		for end < len(id) && isDigit(id[end]) {
			end++
		}
		for k < end && id[k] == '0' {
			k++
		}
		dst = append(dst, naturalDigit)
		dst = binary.BigEndian.AppendUint16(dst, uint16(end-k))
		dst = append(dst, id[k:end]...)
		k = end
	}
	return dst
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// OrderKey is the key of id in an order bucket: NaturalKey, a zero byte,
// and the id. No NaturalKey byte outside a digit run's length is zero (ids
// hold no control characters), so the order is NaturalKey's, then the
// id's bytes: PostgreSQL's (recsys_natural_key(id), id).
func OrderKey(id string) []byte {
	k := appendNaturalKey(make([]byte, 0, 2*len(id)+9), id)
	return append(append(k, 0), id...)
}

// OrderKeyID is the id an OrderKey ends with: it walks the NaturalKey,
// stepping over each digit run whole, to the zero byte.
func OrderKeyID(k []byte) string {
	for at := 0; at < len(k); {
		switch k[at] {
		case 0:
			return string(k[at+1:])
		case naturalDigit:
			if at+3 > len(k) {
				return ""
			}
			at += 3 + int(binary.BigEndian.Uint16(k[at+1:]))
		default:
			at++
		}
	}
	return ""
}

// CompareNatural orders two ids as the listings do.
func CompareNatural(a, b string) int {
	return cmp.Or(bytes.Compare(NaturalKey(a), NaturalKey(b)), cmp.Compare(a, b))
}
