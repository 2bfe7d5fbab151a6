package rpc

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

func TestFramingDetected(t *testing.T) {
	cases := []struct {
		name  string
		first string // raw bytes sent before the first framed request
		want  Framing
	}{
		{"ndjson object", "", FramingNDJSON},
		{"ndjson after blank space", "  ", FramingNDJSON},
		{"header", "", FramingHeader},
		{"header after blank lines", "\r\n\r\n", FramingHeader},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			get := serve(t, server, newTestMux(t).Mux, 0)
			p := newRawPeer(t, client, tc.want)
			if tc.first != "" {
				p.raw(tc.first)
			}
			p.expectEcho(1)
			if got := get().framing; got != tc.want {
				t.Fatalf("framing = %v, want %v", got, tc.want)
			}
			p.expectEcho(2)
		})
	}
}

func TestFramingGarbageFirstByteAnsweredAsNDJSON(t *testing.T) {
	client, server := net.Pipe()
	get := serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.raw("hello there\n")
	r := p.expectError(jsonrpc2.ParseError, "null")
	if !strings.Contains(r.Error.Message, "parse error") {
		t.Errorf("message %q", r.Error.Message)
	}
	if got := get().framing; got != FramingNDJSON {
		t.Fatalf("framing = %v, want ndjson", got)
	}
	p.expectEcho(1)
}

func TestFramingDetectionFailsOnHangUp(t *testing.T) {
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() {
		_, _, err := NewServerStream(server, 0)
		done <- err
	}()
	_ = client.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("want an error when the peer hangs up before sending anything")
		}
	case <-time.After(testTimeout):
		t.Fatal("detection hung after hang-up")
	}
}

func TestServeOverUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	mux := newTestMux(t).Mux
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var server net.Conn
	select {
	case server = <-accepted:
	case <-time.After(testTimeout):
		t.Fatal("accept timed out")
	}
	serve(t, server, mux, 0)
	p := newRawPeer(t, c, FramingHeader)
	p.expectEcho(1)
	p.raw("Content-Length: nope\r\n\r\n")
	p.expectError(jsonrpc2.ParseError, "null")
	p.expectEcho(2)
}

func TestWriteFramesAndSerializes(t *testing.T) {
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			a, b := net.Pipe()
			s := newWireStream(a, nil, framing, DefaultMaxMessage)
			t.Cleanup(func() { _ = s.Close() })
			p := newRawPeer(t, b, framing)

			const writers, each = 8, 50
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						params := json.RawMessage(`{"w":` + strconv.Itoa(w) + `,"i":` + strconv.Itoa(i) + `,"pad":"` + strings.Repeat("x", 300) + `"}`)
						if _, err := s.Write(context.Background(), jsonrpc2.NewNotification("n", jsonrpc2.RawMessage(params))); err != nil {
							errs <- err
						}
					}
				})
			}
			next := make([]int, writers)
			for range writers * each {
				r := p.recv()
				var got struct{ W, I int }
				if err := json.Unmarshal(r.Params, &got); err != nil {
					t.Fatalf("params %s: %v", r.Params, err)
				}
				if got.I != next[got.W] {
					t.Fatalf("writer %d: got %d, want %d", got.W, got.I, next[got.W])
				}
				next[got.W]++
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

func TestWriteCompactsPayloadWithNewlines(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(`{"jsonrpc":"2.0","id":1,"method":"indented"}`)
	r := p.recv()
	if string(r.Result) != `{"a":1,"b":[2]}` {
		t.Fatalf("result %s", r.Result)
	}
	p.expectEcho(2)
}

func TestReadAfterCloseReturnsPromptly(t *testing.T) {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = b.Close() })
	s := NewClientStream(a)
	readErr := make(chan error, 1)
	go func() {
		_, _, err := s.Read(context.Background())
		readErr <- err
	}()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case err := <-readErr:
		if !isClosedErr(err) {
			t.Fatalf("blocked Read returned %v, want a closed error", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Read did not return after Close")
	}
	if _, _, err := s.Read(context.Background()); !isClosedErr(err) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := s.Write(context.Background(), jsonrpc2.NewNotification("x", nil)); !isClosedErr(err) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestFramingString(t *testing.T) {
	if FramingNDJSON.String() != "ndjson" || FramingHeader.String() != "header" {
		t.Fatal(FramingNDJSON.String(), FramingHeader.String())
	}
}
