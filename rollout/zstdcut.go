package rollout

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ZstdCut follows the frame and block headers of a zstd stream written to
// it, without decoding anything, to tell where a stream cut short (a copy
// interrupted, `head -c`) stops being readable. Each header gives the
// size of what follows it (RFC 8878), so the stream splits into units a
// decoder takes whole: a block (the first of a frame with the frame's
// header), a skippable frame, and the last block of a frame together with
// its checksum (the decoder checks the checksum before it hands out that
// block). A cut stream decodes to exactly what its units before the first
// incomplete one hold.
//
// It keeps the bytes of the current unit only (at most MaxZstdTail).
type ZstdCut struct {
	off   int64  // bytes written
	start int64  // offset of the current unit
	unit  []byte // its bytes so far
	state zstdState
	need  int // bytes still to read in this state
	hdr   [8]byte
	nhdr  int
	last  bool // the block being read is the last of its frame
	sum   bool // the frame ends with a checksum
	err   error
}

// MaxZstdTail bounds the unit ZstdCut keeps: a block is at most 128 KiB;
// only a skippable frame can be larger.
const MaxZstdTail = 1 << 20

type zstdState uint8

const (
	zMagic       zstdState = iota // the 4 magic bytes of a frame
	zDescriptor                   // a frame header's descriptor byte
	zHeader                       // the rest of the frame header
	zBlockHeader                  // 3 bytes
	zBlock                        // a block's content
	zChecksum                     // 4 bytes after a frame's last block
	zSkipSize                     // a skippable frame's 4 size bytes
	zSkip                         // its content
)

// errZstdMalformed is a header no zstd stream has: the stream is corrupt,
// not merely cut.
var errZstdMalformed = errors.New("not a zstd stream: malformed frame or block header")

// Write follows p; it never fails (a malformed header is reported by End).
func (z *ZstdCut) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && z.err == nil {
		if z.state == zMagic && z.nhdr == 0 && z.need == 0 {
			z.beginUnit()
			z.need = 4
		}
		k := min(z.need, len(p))
		chunk := p[:k]
		p = p[k:]
		z.off += int64(k)
		z.need -= k
		if len(z.unit)+k > MaxZstdTail {
			z.err = fmt.Errorf("a zstd frame or block of more than %d bytes", MaxZstdTail)
			break
		}
		z.unit = append(z.unit, chunk...)
		switch z.state {
		case zBlock, zSkip:
		default:
			z.nhdr += copy(z.hdr[z.nhdr:], chunk)
		}
		if z.need == 0 {
			z.next()
		}
	}
	return n, nil
}

func (z *ZstdCut) beginUnit() {
	z.start, z.unit, z.nhdr = z.off, z.unit[:0], 0
}

// next moves to the state after a complete one.
func (z *ZstdCut) next() {
	h := z.hdr[:z.nhdr]
	z.nhdr = 0
	switch z.state {
	case zMagic:
		switch m := binary.LittleEndian.Uint32(h); {
		case m == 0xFD2FB528:
			z.state, z.need = zDescriptor, 1
		case m&0xFFFFFFF0 == 0x184D2A50:
			z.state, z.need = zSkipSize, 4
		default:
			z.err = errZstdMalformed
		}
	case zDescriptor:
		d := h[0]
		if d&0x08 != 0 { // the reserved bit
			z.err = errZstdMalformed
			return
		}
		single := d&0x20 != 0
		z.sum = d&0x04 != 0
		n := [4]int{0, 1, 2, 4}[d&3] // dictionary id
		if !single {
			n++ // window descriptor
		}
		switch fcs := d >> 6; {
		case fcs == 0 && single:
			n++
		case fcs > 0:
			n += 1 << fcs
		}
		z.state, z.need = zHeader, n
		if n == 0 {
			z.state, z.need = zBlockHeader, 3
		}
	case zHeader:
		z.state, z.need = zBlockHeader, 3 // the same unit as the header
	case zBlockHeader:
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		z.last = bh&1 != 0
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			z.err = errZstdMalformed
			return
		}
		z.state, z.need = zBlock, size
		if size == 0 {
			z.endBlock()
		}
	case zBlock:
		z.endBlock()
	case zChecksum, zSkip:
		z.state = zMagic
	case zSkipSize:
		z.state, z.need = zSkip, int(binary.LittleEndian.Uint32(h))
		if z.need == 0 {
			z.state = zMagic
		}
	}
}

func (z *ZstdCut) endBlock() {
	switch {
	case !z.last:
		z.state, z.need = zBlockHeader, 3
		z.beginUnit()
	case z.sum:
		z.state, z.need = zChecksum, 4 // the same unit as the last block
	default:
		z.state = zMagic
	}
}

// End reports, once the whole stream was written, whether it was cut
// short: the offset of the first unit it does not hold whole (the stream's
// size when the cut falls between two blocks of a frame) and the bytes
// from there to its end. err is a stream that is not merely cut (a
// malformed header, a unit larger than MaxZstdTail).
func (z *ZstdCut) End() (cut bool, offset int64, tail []byte, err error) {
	if z.err != nil {
		return false, 0, nil, z.err
	}
	if z.state == zMagic && z.need == 0 && z.nhdr == 0 {
		return false, z.off, nil, nil // every frame is whole
	}
	return true, z.start, z.unit, nil
}
