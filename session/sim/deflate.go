package sim

import (
	"fmt"
	"net/http"

	"github.com/hearthd/hearth/session/wsdeflate"
)

// DeflateMode is how the server answers a client's permessage-deflate offer. Whether the real API
// keeps its compression context from message to message is not documented; Codex offers takeover,
// so the default accepts it, and the other modes let tests cover a server that refuses it or the
// extension.
type DeflateMode int

const (
	DeflateTakeover   DeflateMode = iota // accept the offer as made: both sides keep their context unless the client asks otherwise (default)
	DeflateNoTakeover                    // accept without context takeover either way, as gorilla/websocket's server answers
	DeflateOff                           // refuse the extension: every frame uncompressed
)

var deflateModeNames = [...]string{"takeover", "no-takeover", "off"}

func (m DeflateMode) String() string {
	if m >= 0 && int(m) < len(deflateModeNames) {
		return deflateModeNames[m]
	}
	return fmt.Sprintf("DeflateMode(%d)", int(m))
}

// ParseDeflateMode reads "takeover", "no-takeover" or "off" (hearth sim --deflate).
func ParseDeflateMode(s string) (DeflateMode, error) {
	for i, n := range deflateModeNames {
		if n == s {
			return DeflateMode(i), nil
		}
	}
	return 0, fmt.Errorf("sim: unknown deflate mode %q (want takeover, no-takeover or off)", s)
}

// compressMin is the smallest message the server deflates without context takeover: the
// extension is per message, and a delta of a few dozen bytes gains nothing from a fresh
// compressor but its set-up. With takeover every message is deflated: a delta's keys and ids
// repeat the previous one's.
const compressMin = 512

// negotiateDeflate answers the handshake's offer under the server's mode: the hijacking writer to
// upgrade through, and the extension's answer ("" when not negotiated).
func (o Options) negotiateDeflate(w http.ResponseWriter, r *http.Request) (*wsdeflate.HijackWriter, string) {
	modes := [...]wsdeflate.Mode{DeflateTakeover: wsdeflate.Takeover, DeflateNoTakeover: wsdeflate.NoTakeover, DeflateOff: wsdeflate.Off}
	mode := wsdeflate.Takeover
	if o.Deflate >= 0 && int(o.Deflate) < len(modes) {
		mode = modes[o.Deflate]
	}
	p, ok := wsdeflate.Accept(r.Header.Values("Sec-WebSocket-Extensions"), mode)
	if !ok {
		return wsdeflate.Hijacking(w, nil, wsdeflate.Options{}), ""
	}
	opts := wsdeflate.Options{MinSize: compressMin}
	if !p.ServerNoTakeover {
		opts.MinSize = 0
	}
	return wsdeflate.Hijacking(w, &p, opts), p.Header()
}
