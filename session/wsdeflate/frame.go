package wsdeflate

import (
	"encoding/binary"
	"errors"
)

// Frame header bits (RFC 6455 §5.2).
const (
	finBit  = 0x80
	rsv1Bit = 0x40
	rsvBits = 0x70
	maskBit = 0x80

	opContinuation = 0
	opText         = 1
	opBinary       = 2
)

// maxHeader is the longest frame header: 2 bytes, 8 of length, 4 of mask.
const maxHeader = 14

var errFrame = errors.New("websocket: malformed frame")

// header is one frame's header.
type header struct {
	fin    bool
	rsv    byte // the RSV bits as they sit in the first byte
	op     byte
	masked bool
	key    [4]byte
	length int64
}

func (h header) control() bool { return h.op&0x8 != 0 }

// headerSize is the size of the header that begins with b0 and b1.
func headerSize(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&maskBit != 0 {
		n += 4
	}
	return n
}

// parseHeader parses a whole header (headerSize bytes).
func parseHeader(b []byte) (header, error) {
	h := header{fin: b[0]&finBit != 0, rsv: b[0] & rsvBits, op: b[0] & 0x0f, masked: b[1]&maskBit != 0}
	i := 2
	switch n := b[1] & 0x7f; n {
	case 126:
		h.length = int64(binary.BigEndian.Uint16(b[2:]))
		i += 2
	case 127:
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return header{}, errFrame
		}
		h.length = int64(u)
		i += 8
	default:
		h.length = int64(n)
	}
	if h.masked {
		copy(h.key[:], b[i:i+4])
	}
	if h.control() && (h.length > 125 || !h.fin) {
		return header{}, errFrame
	}
	return h, nil
}

// appendHeader appends h's encoding to dst.
func appendHeader(dst []byte, h header) []byte {
	b0 := h.rsv | h.op
	if h.fin {
		b0 |= finBit
	}
	var b1 byte
	if h.masked {
		b1 = maskBit
	}
	switch {
	case h.length <= 125:
		dst = append(dst, b0, b1|byte(h.length))
	case h.length <= 0xffff:
		dst = append(dst, b0, b1|126, byte(h.length>>8), byte(h.length))
	default:
		dst = append(dst, b0, b1|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(h.length))
	}
	if h.masked {
		dst = append(dst, h.key[:]...)
	}
	return dst
}

// mask XORs b with key, starting at position pos of the payload; it
// returns the position after b.
func mask(key [4]byte, pos int, b []byte) int {
	if key == [4]byte{} {
		return pos + len(b)
	}
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return pos + len(b)
}
