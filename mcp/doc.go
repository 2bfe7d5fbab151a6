// Package mcp is hearth's client of the MCP servers an editor passes in
// session/new and session/load: it starts or connects to each (stdio,
// streamable HTTP, SSE) with the official Go SDK, lists their tools under
// model-facing names (mcp__server__tool), calls them within a deadline, and
// stops them. A server that fails to start is left out with a problem the
// caller reports; one that dies or hangs makes its calls fail with an error
// the model can read, never a call that does not return.
//
// A server has StartTimeout (30 s) to start, answer the handshake and list
// its tools; the tail of a stdio server's stderr is kept for the problem
// report. Stopping one closes its stdin, then sends SIGTERM and SIGKILL
// StopTimeout (2 s) apart, then kills its whole process group: nothing it
// started outlives the session. A Set lives as long as its session.
//
// Imports: none of hearth's (the daemon turns Tools into function tools and
// runs calls through its permission flow).
package mcp
