// Package rpc holds hearth's wire concerns for the editor protocol: ACP v1
// (agentclientprotocol.com) over JSON-RPC 2.0 on a unix socket or stdio.
//
// It is a leaf package: it imports no other hearth package. It provides
//
//   - framing detection and validating streams (NewServerStream,
//     NewClientStream): every incoming frame is checked before
//     go.lsp.dev/jsonrpc2 sees it, so bad input is answered with a JSON-RPC
//     error and the connection keeps serving instead of being dropped;
//   - the single mapping from application errors to JSON-RPC codes
//     (WireError) and parameter decoding with encoding/json v1 (DecodeParams,
//     Result), which the ACP payload types need;
//   - the method table and a dispatching Mux that never lets a handler error
//     or panic take the connection down;
//   - a typed Client for the CLI, the stdio relay and tests;
//   - hearth's own wire types for _hearth/status, _hearth/inspect and _hearth/probe.
//
// Payloads (params and results) are always encoded with encoding/json v1 and
// handed to jsonrpc2 as json.RawMessage, which it passes through verbatim; the
// library's own json/v2 codec is never used for ACP types.
package rpc
