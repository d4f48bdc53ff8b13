package rollout

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// ParseUUIDv7 parses a lower-case hyphenated UUID and checks that it is
// version 7 with the RFC 9562 variant. It returns the embedded time.
func ParseUUIDv7(s string) (time.Time, error) {
	if len(s) != 36 {
		return time.Time{}, fmt.Errorf("%q is not a hyphenated UUID", s)
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a UUID: %w", s, err)
	}
	if u.Version() != 7 {
		return time.Time{}, fmt.Errorf("%q is a version %d UUID, not version 7", s, u.Version())
	}
	if u.Variant() != uuid.RFC4122 {
		return time.Time{}, fmt.Errorf("%q does not have the RFC 9562 variant", s)
	}
	sec, nsec := u.Time().UnixTime()
	return time.Unix(sec, nsec).UTC(), nil
}

// isUUID reports whether s has the shape of a hyphenated UUID of any version.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// NewUUIDv7 builds a UUIDv7 from a Unix-millisecond timestamp and 10 bytes of
// randomness (only 74 bits are used: version and variant take the rest).
func NewUUIDv7(unixMilli int64, random [10]byte) string {
	return string(AppendUUIDv7(nil, unixMilli, random))
}

// AppendUUIDv7 appends NewUUIDv7(unixMilli, random) to dst.
func AppendUUIDv7(dst []byte, unixMilli int64, random [10]byte) []byte {
	var u [16]byte
	ms := uint64(unixMilli)
	u[0], u[1], u[2] = byte(ms>>40), byte(ms>>32), byte(ms>>24)
	u[3], u[4], u[5] = byte(ms>>16), byte(ms>>8), byte(ms)
	copy(u[6:], random[:])
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	dst = hex.AppendEncode(dst, u[:4])
	for _, g := range [][]byte{u[4:6], u[6:8], u[8:10], u[10:]} {
		dst = hex.AppendEncode(append(dst, '-'), g)
	}
	return dst
}

// DerivedUUIDv7 is the deterministic id repair assigns: the timestamp is the
// line's own, the random bits are derived from (thread, line, item index), so
// the same input always yields the same id.
func DerivedUUIDv7(unixMilli int64, threadID string, line, item int) string {
	return string(AppendDerivedUUIDv7(nil, unixMilli, threadID, line, item))
}

// AppendDerivedUUIDv7 appends DerivedUUIDv7(unixMilli, threadID, line, item)
// to dst.
func AppendDerivedUUIDv7(dst []byte, unixMilli int64, threadID string, line, item int) []byte {
	var buf [96]byte
	in := append(buf[:0], threadID...)
	in = binary.BigEndian.AppendUint64(in, uint64(line))
	in = binary.BigEndian.AppendUint64(in, uint64(item))
	sum := sha256.Sum256(in)
	return AppendUUIDv7(dst, unixMilli, [10]byte(sum[:10]))
}
