package responses

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hearthd/hearth/session/wsdeflate"
)

// proxyFunc picks the proxy for a request, as http.ProxyFromEnvironment.
type proxyFunc func(*http.Request) (*url.URL, error)

// wsDialer returns the gorilla Dialer that opens the WebSocket at u
// (ws:// or wss://) with the connection's counters and read gate under it.
//
// With compression on, hearth's own transport runs below gorilla: the TCP
// connection (counted and gated), an HTTP CONNECT through the proxy the
// environment names, TLS for wss, then permessage-deflate with context
// takeover (wsdeflate) on which gorilla speaks plain frames. gorilla's own
// compression has no takeover: every message pays the full compressed
// size of the tools and settings it repeats. Under a proxy other than
// HTTP(S) (SOCKS) gorilla keeps the dial, with its own compression.
func wsDialer(cfg Config, u *url.URL, proxy proxyFunc, k *counters, gate *readGate) websocket.Dialer {
	tcp := countingDialer(cfg.Dial, &k.wireSent, &k.wireReceived, gate)
	d := websocket.Dialer{HandshakeTimeout: cfg.HandshakeTimeout, Proxy: proxy, NetDialContext: tcp}
	if cfg.DisableCompression {
		return d
	}
	via, err := proxy(&http.Request{URL: &url.URL{Scheme: httpScheme(u.Scheme), Host: u.Host}})
	if err != nil || (via != nil && via.Scheme != "http" && via.Scheme != "https") {
		d.EnableCompression = true
		return d
	}
	open := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := openTransport(ctx, tcp, u, via, cfg.rootCAs, network, addr)
		if err != nil {
			return nil, err
		}
		return wsdeflate.Client(conn, wsdeflate.Options{}), nil
	}
	d.Proxy, d.NetDialContext, d.NetDialTLSContext = nil, open, open
	return d
}

func httpScheme(ws string) string {
	if ws == "wss" {
		return "https"
	}
	return "http"
}

// openTransport connects to addr (u's host and port) for the WebSocket's
// handshake: through via when set (HTTP CONNECT), with TLS when u is wss.
func openTransport(ctx context.Context, tcp func(ctx context.Context, network, addr string) (net.Conn, error), u, via *url.URL, roots *x509.CertPool, network, addr string) (net.Conn, error) {
	hop := addr
	if via != nil {
		hop = via.Host
		if via.Port() == "" {
			hop = net.JoinHostPort(via.Hostname(), map[string]string{"http": "80", "https": "443"}[via.Scheme])
		}
	}
	conn, err := tcp(ctx, network, hop)
	if err != nil {
		return nil, err
	}
	if via != nil {
		if conn, err = connect(ctx, conn, via, roots, addr); err != nil {
			return nil, err
		}
	}
	if u.Scheme == "wss" {
		if conn, err = handshakeTLS(ctx, conn, u.Hostname(), roots); err != nil {
			return nil, err
		}
	}
	return conn, nil
}

// handshakeTLS runs a TLS client handshake for host over conn, trusting
// roots (nil: the system's); conn is closed when it fails.
func handshakeTLS(ctx context.Context, conn net.Conn, host string, roots *x509.CertPool) (net.Conn, error) {
	tc := tls.Client(conn, &tls.Config{ServerName: host, RootCAs: roots})
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// connect asks the proxy via, on conn, for a tunnel to addr (HTTP
// CONNECT, its credentials from via's user info); conn is closed when it
// fails.
func connect(ctx context.Context, conn net.Conn, via *url.URL, roots *x509.CertPool, addr string) (net.Conn, error) {
	fail := func(err error) (net.Conn, error) {
		conn.Close()
		return nil, fmt.Errorf("proxy %s: %w", via.Host, err)
	}
	if via.Scheme == "https" {
		tc, err := handshakeTLS(ctx, conn, via.Hostname(), roots)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", via.Host, err)
		}
		conn = tc
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if user := via.User; user != nil {
		pass, _ := user.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user.Username()+":"+pass)))
	}
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
		defer conn.SetDeadline(time.Time{})
	}
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("CONNECT %s: %s", addr, resp.Status))
	}
	if br.Buffered() > 0 {
		return fail(fmt.Errorf("CONNECT %s: data before the tunnel", addr))
	}
	return conn, nil
}
