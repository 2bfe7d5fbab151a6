package main

import (
	"context"
	"io"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
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
