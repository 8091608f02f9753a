package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// KeepVersions is how many versions of one model a store keeps.
const KeepVersions = 2

// BlobMagic starts a sealed model blob: magic, CRC-32C of the rest, the
// blob. The codecs cannot tell a flipped byte inside a float from a real
// weight, so the checksum is what catches a damaged record.
const BlobMagic = "RSB1"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptModel is a stored model whose bytes fail their checksum.
var ErrCorruptModel = errors.New("the stored model is corrupt (checksum mismatch)")

// Seal prefixes a model blob with BlobMagic and its CRC-32C, as both
// stores keep it.
func Seal(blob []byte) []byte {
	out := make([]byte, 0, len(BlobMagic)+4+len(blob))
	out = append(out, BlobMagic...)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(blob, crcTable))
	return append(out, blob...)
}

// Unseal checks and strips Seal's seal (ErrCorruptModel on a mismatch);
// the blob it returns shares v's bytes. A blob stored before blobs were
// sealed (no magic) is returned as it is.
func Unseal(v []byte) ([]byte, error) {
	if !bytes.HasPrefix(v, []byte(BlobMagic)) {
		return v, nil
	}
	if len(v) < len(BlobMagic)+4 {
		return nil, ErrCorruptModel
	}
	sum := binary.BigEndian.Uint32(v[len(BlobMagic):])
	blob := v[len(BlobMagic)+4:]
	if crc32.Checksum(blob, crcTable) != sum {
		return nil, ErrCorruptModel
	}
	return blob, nil
}
