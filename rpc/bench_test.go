package rpc

import (
	"context"
	"testing"
)

// BenchmarkNDJSONRoundTrip measures one call and its reply through the whole
// stack: Client (v1 encode) → validating NDJSON stream → Mux → handler → reply,
// over a net.Pipe.
func BenchmarkNDJSONRoundTrip(b *testing.B) {
	c := pipeClient(b, newTestMux(b).Mux, ClientOptions{})
	ctx := context.Background()
	params := map[string]string{"sessionId": "s-1", "text": "hello"}
	var out map[string]string
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Call(ctx, "echo", params, &out); err != nil {
			b.Fatal(err)
		}
	}
}
