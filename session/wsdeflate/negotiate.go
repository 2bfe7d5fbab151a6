package wsdeflate

import (
	"fmt"
	"strconv"
	"strings"
)

// Name is the extension's token in Sec-WebSocket-Extensions.
const Name = "permessage-deflate"

// Offer is what a client offers: the extension with no parameters (both
// sides may keep their context; the server may refuse that in its answer).
const Offer = Name

// Params are the negotiated parameters of one connection's extension.
type Params struct {
	// ServerNoTakeover: the server compresses each message afresh, so
	// the client inflates each without the previous ones' window.
	ServerNoTakeover bool
	// ClientNoTakeover: the client compresses each message afresh.
	ClientNoTakeover bool
	// ClientWindowBits is the client's window the server allows (8–15);
	// 0 is 15. Go's compressor cannot narrow its window, so a client told
	// less than 15 sends its messages uncompressed (always allowed).
	ClientWindowBits int
}

// Header renders p as the server's Sec-WebSocket-Extensions answer.
func (p Params) Header() string {
	h := Name
	if p.ServerNoTakeover {
		h += "; server_no_context_takeover"
	}
	if p.ClientNoTakeover {
		h += "; client_no_context_takeover"
	}
	if p.ClientWindowBits != 0 {
		h += "; client_max_window_bits=" + strconv.Itoa(p.ClientWindowBits)
	}
	return h
}

// extension is one element of a Sec-WebSocket-Extensions list: its name
// and parameters in order (a parameter without a value maps to "").
type extension struct {
	name   string
	params []param
}

type param struct{ key, value string }

// parseExtensions parses the values of Sec-WebSocket-Extensions headers
// (RFC 6455 §9.1): comma-separated extensions, each a name and
// semicolon-separated parameters, values bare or quoted.
func parseExtensions(values []string) []extension {
	var exts []extension
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			parts := strings.Split(item, ";")
			e := extension{name: strings.ToLower(strings.TrimSpace(parts[0]))}
			if e.name == "" {
				continue
			}
			for _, p := range parts[1:] {
				k, val, _ := strings.Cut(p, "=")
				k = strings.ToLower(strings.TrimSpace(k))
				val = strings.Trim(strings.TrimSpace(val), `"`)
				if k != "" {
					e.params = append(e.params, param{k, val})
				}
			}
			exts = append(exts, e)
		}
	}
	return exts
}

// windowBits parses a max_window_bits value: 8 to 15.
func windowBits(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 8 && n <= 15 && strconv.Itoa(n) == v
}

// Mode is a server's policy for the extension.
type Mode int

const (
	// Takeover accepts the client's offer as made: both sides keep their
	// context unless the client asks otherwise.
	Takeover Mode = iota
	// NoTakeover accepts it without context takeover on either side, as
	// gorilla/websocket's server does.
	NoTakeover
	// Off refuses the extension: every message goes uncompressed.
	Off
)

// Accept is the server's side: from the client's offers (the values of
// Sec-WebSocket-Extensions) it picks the first permessage-deflate offer it
// can honour under mode and returns the parameters both sides then use.
// ok is false when the extension is not negotiated. An offer that asks the
// server for a window under 15 bits is declined (Go's compressor cannot
// narrow its window), as is one with an unknown or repeated parameter.
func Accept(offers []string, mode Mode) (p Params, ok bool) {
	if mode == Off {
		return Params{}, false
	}
	for _, e := range parseExtensions(offers) {
		if e.name != Name {
			continue
		}
		p, ok := acceptOffer(e)
		if !ok {
			continue
		}
		if mode == NoTakeover {
			p.ServerNoTakeover, p.ClientNoTakeover = true, true
		}
		return p, true
	}
	return Params{}, false
}

// acceptOffer reads one permessage-deflate offer.
func acceptOffer(e extension) (Params, bool) {
	var p Params
	seen := map[string]bool{}
	for _, pr := range e.params {
		if seen[pr.key] {
			return Params{}, false
		}
		seen[pr.key] = true
		switch pr.key {
		case "server_no_context_takeover":
			if pr.value != "" {
				return Params{}, false
			}
			p.ServerNoTakeover = true
		case "client_no_context_takeover":
			if pr.value != "" {
				return Params{}, false
			}
			p.ClientNoTakeover = true
		case "server_max_window_bits":
			if n, ok := windowBits(pr.value); !ok || n < 15 {
				return Params{}, false
			}
		case "client_max_window_bits":
			if _, ok := windowBits(pr.value); pr.value != "" && !ok {
				return Params{}, false
			}
		default:
			return Params{}, false
		}
	}
	return p, true
}

// answer is the client's side: it reads the server's answer to Offer (the
// values of Sec-WebSocket-Extensions in the 101 response). ok is false
// when the server did not accept the extension. An answer the RFC makes
// the client refuse (a parameter unknown, repeated or malformed, the
// extension twice) is an error: the connection must fail.
func answer(values []string) (p Params, ok bool, err error) {
	for _, e := range parseExtensions(values) {
		if e.name != Name {
			continue // gorilla ignores extensions it did not offer; so do we
		}
		if ok {
			return Params{}, false, fmt.Errorf("websocket: the server accepted %s twice", Name)
		}
		ok = true
		seen := map[string]bool{}
		for _, pr := range e.params {
			if seen[pr.key] {
				return Params{}, false, fmt.Errorf("websocket: %s answered with %s twice", Name, pr.key)
			}
			seen[pr.key] = true
			switch {
			case pr.key == "server_no_context_takeover" && pr.value == "":
				p.ServerNoTakeover = true
			case pr.key == "client_no_context_takeover" && pr.value == "":
				p.ClientNoTakeover = true
			case pr.key == "server_max_window_bits":
				// Any window of the server's fits the 32 KiB one we inflate with.
				if _, good := windowBits(pr.value); !good {
					return Params{}, false, fmt.Errorf("websocket: %s answered server_max_window_bits=%q", Name, pr.value)
				}
			case pr.key == "client_max_window_bits":
				n, good := windowBits(pr.value)
				if !good {
					return Params{}, false, fmt.Errorf("websocket: %s answered client_max_window_bits=%q", Name, pr.value)
				}
				p.ClientWindowBits = n
			default:
				return Params{}, false, fmt.Errorf("websocket: %s answered with an unknown parameter %q", Name, pr.key)
			}
		}
	}
	return p, ok, nil
}
