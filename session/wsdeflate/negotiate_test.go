package wsdeflate

import "testing"

// The server's side of RFC 7692's negotiation, offer by offer.
func TestAccept(t *testing.T) {
	cases := []struct {
		offers []string
		mode   Mode
		want   string // the answer; "" when declined
	}{
		{[]string{"permessage-deflate"}, Takeover, "permessage-deflate"},
		{[]string{"permessage-deflate; client_max_window_bits"}, Takeover, "permessage-deflate"}, // Codex's offer
		{[]string{"permessage-deflate; server_no_context_takeover; client_no_context_takeover"}, Takeover, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{[]string{"permessage-deflate"}, NoTakeover, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{[]string{"permessage-deflate"}, Off, ""},
		{[]string{"x-webkit-deflate-frame"}, Takeover, ""},
		{[]string{"permessage-deflate; server_max_window_bits=10, permessage-deflate"}, Takeover, "permessage-deflate"}, // the second offer
		{[]string{"permessage-deflate; server_max_window_bits=15"}, Takeover, "permessage-deflate"},
		{[]string{"permessage-deflate; client_max_window_bits=9"}, Takeover, "permessage-deflate"},
		{[]string{"permessage-deflate; client_max_window_bits=16"}, Takeover, ""},
		{[]string{"permessage-deflate; unknown"}, Takeover, ""},
		{[]string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, Takeover, ""},
		{[]string{"foo, Permessage-Deflate ; client_max_window_bits=\"15\""}, Takeover, "permessage-deflate"},
	}
	for _, tc := range cases {
		p, ok := Accept(tc.offers, tc.mode)
		got := ""
		if ok {
			got = p.Header()
		}
		if got != tc.want {
			t.Errorf("%q under %d: answered %q, want %q", tc.offers, tc.mode, got, tc.want)
		}
	}
}

// The client's side: what an answer means, and the answers it must refuse.
func TestAnswer(t *testing.T) {
	cases := []struct {
		answer   string
		ok, fail bool
		want     Params
	}{
		{"", false, false, Params{}},
		{"permessage-deflate", true, false, Params{}},
		{"permessage-deflate; server_no_context_takeover; client_no_context_takeover", true, false, Params{ServerNoTakeover: true, ClientNoTakeover: true}},
		{"permessage-deflate; server_max_window_bits=9", true, false, Params{}},
		{"permessage-deflate; client_max_window_bits=10", true, false, Params{ClientWindowBits: 10}},
		{"permessage-deflate; client_max_window_bits", false, true, Params{}},
		{"permessage-deflate; bogus=1", false, true, Params{}},
		{"permessage-deflate, permessage-deflate", false, true, Params{}},
		{"other-extension", false, false, Params{}},
	}
	for _, tc := range cases {
		p, ok, err := answer([]string{tc.answer})
		if ok != tc.ok || (err != nil) != tc.fail || p != tc.want {
			t.Errorf("answer %q: %+v, %v, %v; want %+v, %v, fail %v", tc.answer, p, ok, err, tc.want, tc.ok, tc.fail)
		}
	}
}

// A client told to keep its window under 15 bits sends uncompressed (Go's
// compressor cannot narrow its window) and still inflates what arrives.
func TestNarrowClientWindow(t *testing.T) {
	c := Client(nil, Options{})
	c.params = &Params{ClientWindowBits: 10}
	c.start()
	if c.enc.on || !c.dec.on || !c.dec.takeover {
		t.Fatalf("encoder on %v, decoder on %v takeover %v", c.enc.on, c.dec.on, c.dec.takeover)
	}
}

// FuzzNegotiate: any header parses without a panic, and what the server
// accepts, its own answer renders and the client reads back the same.
func FuzzNegotiate(f *testing.F) {
	f.Add("permessage-deflate; client_max_window_bits")
	f.Add("permessage-deflate; server_no_context_takeover, x; y=\"1\"")
	f.Fuzz(func(t *testing.T, offer string) {
		answer([]string{offer})
		for _, mode := range []Mode{Takeover, NoTakeover, Off} {
			p, ok := Accept([]string{offer}, mode)
			if !ok {
				continue
			}
			back, ok, err := answer([]string{p.Header()})
			if !ok || err != nil || back != p {
				t.Fatalf("%q: accepted %+v, read back %+v %v %v", offer, p, back, ok, err)
			}
		}
	})
}
