package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
)

// stdio is the editor's end of `hearth acp`: requests on stdin, answers on
// stdout.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }

// failFirstCall answers the editor's first request (its initialize) with
// why there is no daemon to relay to, so the editor shows hearth's own
// reason at once rather than a dead pipe; main prints it on stderr too. It
// gives up when the editor sends nothing within a few seconds.
func failFirstCall(in io.Reader, out io.Writer, why error) {
	stream, _, err := rpc.NewServerStream(stdio{in, out}, rpc.DefaultMaxMessage)
	if err != nil {
		return // nothing came: stdin closed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan jsonrpc2.Message, 1)
	go func() { // ends with the process when the editor sends nothing
		msg, _, err := stream.Read(ctx)
		if err == nil {
			got <- msg
		}
		close(got)
	}()
	select {
	case msg, ok := <-got:
		if call, isCall := msg.(*jsonrpc2.Call); ok && isCall {
			stream.Write(ctx, jsonrpc2.NewResponse(call.ID(), nil, jsonrpc2.NewError(jsonrpc2.InternalError, "hearth: "+why.Error())))
		}
	case <-ctx.Done():
	}
}

// A daemon that fails before it is ready tells its starter why on the
// readiness descriptor (serve --ready-fd): one byte of kind — kindSocket
// when it failed at its socket, which a daemon run in the starter's own
// process (ask --no-daemon) does not use, kindOther for anything else
// (configuration, data directory, database), which it would meet too —
// then its error's text. A ready daemon writes '\n' instead.
const (
	kindSocket = 'S'
	kindTaken  = 'T' // another daemon holds the socket: it is starting or serving, and answers there
	kindOther  = 'E'
)

// socketFailure marks serve's error at its socket (safesocket.Listen).
type socketFailure struct{ error }

func (e socketFailure) Unwrap() error { return e.error }

// tellStarter writes err on the readiness descriptor of a daemon that was
// not ready: nothing for a nil err or descriptor.
func tellStarter(ready *os.File, err error) {
	if ready == nil || err == nil {
		return
	}
	kind := byte(kindOther)
	switch {
	case errors.Is(err, safesocket.ErrAlreadyRunning):
		kind = kindTaken
	case errors.As(err, new(socketFailure)):
		kind = kindSocket
	}
	ready.Write(append([]byte{kind}, err.Error()...))
}

// startFailure is why a daemon this process started did not come up, in
// its own words (tellStarter). Created per failed start.
type startFailure struct {
	msg    string
	socket bool // it failed at its socket
	taken  bool // another daemon holds the socket (it lost a race to start)
}

func (e *startFailure) Error() string { return "the daemon could not start: " + e.msg }

// readFailure reads what a daemon that was not ready wrote after its kind
// byte, up to its exit.
func readFailure(kind byte, r io.Reader) *startFailure {
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	return &startFailure{msg: strings.TrimSpace(string(b)), socket: kind == kindSocket || kind == kindTaken, taken: kind == kindTaken}
}

// errNotUp is wrapped when a started daemon neither said it failed nor
// answered on its socket.
var errNotUp = errors.New("the daemon did not come up")

// noDaemonHelps reports whether a daemon run in the process (ask
// --no-daemon) would avoid err, a failure to start or reach the daemon: a
// failure at the socket, or a daemon that never came up. Not a
// configuration, data directory or database error, which it meets too.
func noDaemonHelps(err error) bool {
	var sf *startFailure
	if errors.As(err, &sf) {
		return sf.socket
	}
	return errors.Is(err, errNotUp)
}
