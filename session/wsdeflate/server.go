package wsdeflate

import (
	"bufio"
	"net"
	"net/http"
)

// Hijacking returns w with its Hijack wrapping the connection in a Server
// Conn with p and opts: hand it to gorilla's Upgrader.Upgrade, whose
// EnableCompression must be off (the Conn does the compressing) and whose
// ReadBufferSize must not be 0. The Conn it made is then Hijacked().
func Hijacking(w http.ResponseWriter, p *Params, opts Options) *HijackWriter {
	return &HijackWriter{ResponseWriter: w, params: p, opts: opts}
}

// HijackWriter is an http.ResponseWriter whose Hijack wraps the
// connection in a Conn. It lives for one handler call.
type HijackWriter struct {
	http.ResponseWriter
	params *Params
	opts   Options
	conn   *Conn
}

// Hijack hijacks the underlying writer and wraps its connection.
func (w *HijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = Server(conn, w.params, w.opts)
	return w.conn, brw, nil
}

// Hijacked is the Conn Hijack made; nil before.
func (w *HijackWriter) Hijacked() *Conn { return w.conn }

// Raw is the connection a Conn wraps.
func (c *Conn) Raw() net.Conn { return c.Conn }
