package wsdeflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
)

// maxHead bounds the HTTP head of the handshake a Conn reads or rewrites.
const maxHead = 64 << 10

var errHead = errors.New("websocket: handshake head over 64 KiB")

// Options tune a Conn.
type Options struct {
	// Level is the compression level (compress/flate); 0 is the default
	// level, which with takeover compresses a repeated create to a
	// quarter of BestSpeed's bytes, in less time (BenchmarkCompress).
	Level int
	// MinSize: a message gorilla writes in one frame of fewer bytes goes
	// uncompressed (the extension is per message). 0 compresses all.
	MinSize int
}

// Conn is a connection with the extension under gorilla. Client and
// Server make one; it lives as long as the connection it wraps, which its
// Close closes. Read is for one goroutine at a time, Write for one.
type Conn struct {
	net.Conn
	client bool
	opts   Options

	rmu      sync.Mutex // guards the handshake's state below, between Read and Write
	head     bool       // the HTTP head is still being read (client) or written
	plain    bool       // after the head, bytes pass as they are: the extension is off
	params   *Params    // negotiated (nil: not, or not yet)
	err      error      // the server's answer was refused
	hs       []byte     // the head gathered so far
	wroteReq bool       // the client's request has gone out

	dec decoder
	enc encoder
}

// Client wraps conn, on which gorilla is about to write its handshake
// request: the request goes out with Offer, and what the server answers
// decides the rest (Negotiated).
func Client(conn net.Conn, opts Options) *Conn {
	c := &Conn{Conn: conn, client: true, opts: opts, head: true}
	c.enc = encoder{masked: true, level: level(opts), min: opts.MinSize}
	return c
}

// Server wraps conn, hijacked from an HTTP handler that answers the
// handshake with gorilla's Upgrader: p (from Accept) goes out in the 101
// response and applies to the frames after it; nil p runs uncompressed.
// The upgrader's ReadBufferSize must not be 0, or gorilla reads the
// hijacked buffer instead of the Conn.
func Server(conn net.Conn, p *Params, opts Options) *Conn {
	c := &Conn{Conn: conn, opts: opts, head: true, params: p}
	c.enc = encoder{level: level(opts), min: opts.MinSize}
	c.dec = decoder{src: bufio.NewReaderSize(conn, chunk), remask: true}
	c.start()
	return c
}

func level(o Options) int {
	if o.Level == 0 {
		return flate.DefaultCompression
	}
	return o.Level
}

// start applies the negotiated parameters to both directions.
func (c *Conn) start() {
	p := c.params
	if p == nil {
		c.plain, c.dec.raw = true, true
		return
	}
	c.dec.on = true
	c.enc.on = !c.client || p.ClientWindowBits == 0 || p.ClientWindowBits == 15
	if c.client {
		c.enc.takeover, c.dec.takeover = !p.ClientNoTakeover, !p.ServerNoTakeover
	} else {
		c.enc.takeover, c.dec.takeover = !p.ServerNoTakeover, !p.ClientNoTakeover
	}
}

// Negotiated returns the parameters the handshake settled, and whether
// the extension is on. On the client's side it is known once gorilla has
// read the server's answer (its Dial has returned).
func (c *Conn) Negotiated() (Params, bool) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.params == nil {
		return Params{}, false
	}
	return *c.params, true
}

func (c *Conn) Read(p []byte) (int, error) {
	if c.client && c.readingHead() {
		if err := c.readAnswer(); err != nil {
			return 0, err
		}
	}
	return c.dec.read(p)
}

func (c *Conn) readingHead() bool {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	return c.head
}

func (c *Conn) Write(p []byte) (int, error) {
	c.rmu.Lock()
	head := c.head && !(c.client && c.wroteReq)
	plain := c.plain && !c.head
	c.rmu.Unlock()
	if head {
		return c.writeHead(p)
	}
	if plain {
		return c.Conn.Write(p)
	}
	out, err := c.enc.write(p)
	if err != nil {
		return 0, err
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeHead gathers the handshake head gorilla writes and sends it with
// the extension's header line added (the client's offer, the server's
// answer); the bytes after it are frames.
func (c *Conn) writeHead(p []byte) (int, error) {
	c.hs = append(c.hs, p...)
	end := bytes.Index(c.hs, []byte("\r\n\r\n"))
	if end < 0 {
		if len(c.hs) > maxHead {
			return 0, errHead
		}
		return len(p), nil
	}
	line := ""
	switch {
	case c.client:
		line = "Sec-WebSocket-Extensions: " + Offer + "\r\n"
	case c.params != nil && switching(string(c.hs[:bytes.IndexByte(c.hs, '\r')])):
		line = "Sec-WebSocket-Extensions: " + c.params.Header() + "\r\n"
	}
	head := append([]byte(nil), c.hs[:end+2]...)
	head = append(head, line...)
	head = append(head, "\r\n"...)
	rest := c.hs[end+4:]
	c.hs = nil
	c.rmu.Lock()
	if c.client {
		c.wroteReq = true
	} else {
		c.head = false
	}
	c.rmu.Unlock()
	if _, err := c.Conn.Write(head); err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		out, err := c.enc.write(rest)
		if err != nil {
			return 0, err
		}
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// readAnswer reads the server's handshake answer, settles the extension
// from it and hands gorilla the answer without the extension's header.
func (c *Conn) readAnswer() error {
	buf := make([]byte, 4096)
	for {
		if end := bytes.Index(c.hs, []byte("\r\n\r\n")); end >= 0 {
			return c.settle(c.hs[:end+4], c.hs[end+4:])
		}
		if len(c.hs) > maxHead {
			return errHead
		}
		n, err := c.Conn.Read(buf)
		c.hs = append(c.hs, buf[:n]...)
		if err != nil && n == 0 {
			return err
		}
	}
}

// settle applies the answer head and queues it, rewritten, for gorilla;
// rest is what followed it.
func (c *Conn) settle(head, rest []byte) error {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	status, err := tp.ReadLine()
	if err != nil {
		return err
	}
	mime, err := tp.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		return fmt.Errorf("websocket: handshake answer: %w", err)
	}
	var params *Params
	out := head
	if switching(status) {
		p, ok, err := answer(http.Header(mime).Values("Sec-WebSocket-Extensions"))
		if err != nil {
			return err
		}
		if ok {
			params = &p
		}
		out = stripExtensions(head)
	}
	c.rmu.Lock()
	c.params, c.head, c.hs = params, false, nil
	c.start() // without the extension, or after an error's head, bytes pass as they come
	c.rmu.Unlock()
	c.dec.src = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(append([]byte(nil), rest...)), c.Conn), chunk)
	c.dec.out = append([]byte(nil), out...)
	return nil
}

// switching reports whether an HTTP status line is 101's.
func switching(status string) bool {
	f := strings.Fields(status)
	return len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/1.") && f[1] == "101"
}

// stripExtensions removes the Sec-WebSocket-Extensions lines from an HTTP
// head (and their continuation lines).
func stripExtensions(head []byte) []byte {
	var out []byte
	skip := false
	for _, line := range bytes.SplitAfter(head, []byte("\r\n")) {
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			if !skip {
				out = append(out, line...)
			}
			continue
		}
		name, _, _ := bytes.Cut(line, []byte(":"))
		skip = strings.EqualFold(strings.TrimSpace(string(name)), "Sec-WebSocket-Extensions")
		if !skip {
			out = append(out, line...)
		}
	}
	return out
}
