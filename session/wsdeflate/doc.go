// Package wsdeflate is permessage-deflate (RFC 7692) with context takeover
// for gorilla/websocket, which offers the extension only without takeover:
// a fresh compressor per message, so the kilobytes of tools and settings a
// Responses request repeats every time cost their full compressed size
// each time. Conn sits between gorilla and the transport (TCP, or TLS over
// it): it adds the extension to the handshake gorilla writes, reads the
// peer's answer (hiding it from gorilla, which then sees plain frames), and
// transcodes the frames: a data message gorilla writes goes out compressed
// by one flate writer that lives as long as the connection (sync flush, the
// 00 00 ff ff tail stripped, RSV1 on its first frame), and a compressed
// message from the peer is inflated with a reader seeded with the last
// 32 KiB the peer sent before it. Control frames pass unchanged; a message
// gorilla sees arrives as fragments of at most 32 KiB, so memory stays
// bounded whatever a message inflates to.
//
// Negotiation follows the RFC: the client offers plain permessage-deflate
// (Go's compressor cannot narrow its 32 KiB window, so it offers no
// client_max_window_bits), honours client_no_context_takeover and
// server_no_context_takeover when the server answers them, and runs
// uncompressed when the server does not accept. Accept is the server's
// side of the same rules.
//
// A Conn lives as long as the connection it wraps; one goroutine may read
// and one write at a time (gorilla's own rule). The package imports no
// other hearth package.
package wsdeflate
