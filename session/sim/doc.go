// Package sim is a protocol-faithful simulator of OpenAI's Responses API over WebSocket and
// its HTTP/SSE twin, for hearth's tests, benchmarks and demo (`hearth sim --addr`). It follows
// docs/responses-websocket.md §1–3 and §5. It imports no other hearth package on purpose: it
// must not share code with the client in session/, so that it catches the client's bugs.
//
// # API
//
//	New(Options) *Server                       create; serves nothing yet
//	(*Server).Start() (base string, err error) listen on 127.0.0.1:0; base is http://127.0.0.1:PORT/v1
//	(*Server).ListenAndServe(ctx, addr) error  serve on addr until ctx ends, then Close (Options.OnListen reports the address)
//	(*Server).ServeHTTP(w, r)                  use as an http.Handler (any path ending in /responses)
//	(*Server).Close() error                    close listener and connections, wait for all goroutines
//	(*Server).Received() []Received            copy of every recorded client frame / HTTP request
//	(*Server).WaitReceived(ctx, n)             wait until the first n records are answered
//	(*Server).Handshakes() int                 WebSocket upgrade attempts, refused ones included
//	(*Server).InjectFault(Fault)               queue a fault; ClearFaults, PendingFaults
//	Cost.ProcessDelay(inputBytes)              the processing delay the cost model charges
//
// Routes: GET {base}/responses upgraded to WebSocket; POST {base}/responses, streaming SSE
// when the body has stream:true (else the final response as JSON). With Options.APIKey set
// both require "Authorization: Bearer <key>" (401 JSON error otherwise); empty accepts all.
//
// # WebSocket protocol
//
// Each client frame is one text frame holding a JSON object with a string type. A binary frame
// closes the connection with 1003, a non-JSON or untyped frame with 1002. Types other than
// response.create get an unknown_event_type error event. response.create is the flat HTTP body:
// background is rejected (unsupported_parameter); stream is accepted and
// ignored (responses always stream; OpenAI's own clients, Codex among them,
// send stream:true anyway); unknown fields are ignored.
// generate:false is a warm-up: response.created then response.completed with output [].
//
// previous_response_id resolves against a connection-local cache that holds only the latest
// response of each lane (store:false): a miss, an older response, or another lane's response
// gives previous_response_not_found; any failure of a continuation (error event or
// response.failed) evicts the lane's cached response. The effective input is the parent's
// input and output followed by the new input. A new connection starts with an empty cache.
//
// Lanes: stream_id (1–256 of [A-Za-z0-9_.-], else invalid_stream_id) names a lane; a lane runs
// its requests FIFO, lanes run concurrently and their events carry stream_id (default-lane
// events carry none). At most MaxActiveResponses (16) run at once per connection, the rest
// queue in arrival order; the MaxStreamNames+1-th (33rd) distinct name gets
// websocket_stream_limit_reached. With Options.DisableLanes one response runs at a time per
// connection and the rest queue; a request carrying stream_id gets invalid_stream_id — chosen
// over silently ignoring it so that a client configured for an old server which still sends
// stream_id fails loudly instead of receiving events without the stream_id it routes by.
//
// After Options.MaxAge (default 60 min) the next create is answered with the connection-wide
// error websocket_connection_limit_reached (status 400, no stream_id) and the connection is
// closed with 1000. With Options.PushAgeLimit the error is pushed at MaxAge as soon as no
// response is running, without waiting for a create.
//
// Each response's events carry sequence_number from 0: response.created, response.in_progress,
// then per output item output_item.added, (content_part.added, output_text.delta*,
// output_text.done, content_part.done) or (function_call_arguments.delta*,
// function_call_arguments.done), output_item.done, and one terminal event (response.completed,
// response.incomplete or response.failed) carrying the full response with usage. Errors on
// WebSocket are nested ({type:"error",status,error:{type,code,message,param}}), on SSE flat.
//
// # The scripted model
//
// The turn is everything after the last user message; the script reads that message's text:
//
//	sim:calls=N    N function calls, one per response; text once N outputs are in the turn
//	sim:tool=NAME  the tool to call (default: the first function tool in tools)
//	sim:args=JSON  compact JSON object of arguments (default {"path":"."})
//	sim:tokens=N   the text answer is "tok0 tok1 … tok(N-1)"
//	read <path>    calls read_file {"path":<path>} if offered (no directive, no output yet)
//	list / files   calls list_dir {"path":"."} if offered (same conditions)
//
// Otherwise it answers "You said: <text>", or after tool outputs "I called <name> <count>
// time(s). Last result:\n" plus the first 20 lines of the last output. Text streams one delta
// per word; the deltas concatenate to the final text exactly.
//
// # Cost model
//
// Options.Cost (zero = free): Handshake delays each WebSocket upgrade; PerRequest is a fixed
// delay per create; PerInputKB is charged per 1024 bytes of the request's input field — only
// the new items of a chained request, the whole transcript of a full one; FirstToken delays
// the first output item; TokensPerSecond paces deltas (0 = unpaced). Received.ProcessDelay
// records PerRequest + PerInputKB×InputBytes/1024 for each create, and Cost.String prints the
// parameters for a benchmark's report.
//
// # Faults
//
// InjectFault(Fault{Kind, Count, ...}) queues a fault for the next Count matching requests
// (optionally filtered by Match); a request consumes at most one fault, the first pending one
// that fits, and Received.Fault says which:
//
//	FaultRefuseUpgrade       next Count upgrades answered with Status (426, 429, 500, 401…)
//	FaultCloseMidResponse    after AfterEvents events close with CloseCode 1000/1011 or CloseAbrupt (no close frame); HTTP aborts the stream
//	FaultCloseAfterResponse  close with CloseCode right after the terminal event (WebSocket)
//	FaultBinaryFrame         a binary frame after AfterEvents events (WebSocket)
//	FaultMalformedFrame      a non-JSON text frame / SSE data line after AfterEvents events
//	FaultRateLimit           rate_limit_exceeded, status 429, "Please try again in 1.5s": instead of the response (HTTP: 429 status) or, with AfterEvents>0, mid-stream
//	FaultResponseFailed      response.created, response.in_progress, response.failed
//	FaultResponseIncomplete  half the text, then response.incomplete (reason max_output_tokens)
//	FaultDropCache           the connection's cache is emptied before the request resolves
//	FaultConnectionLimit     websocket_connection_limit_reached and close, as at MaxAge
//	FaultSilence             the event at index AfterEvents (default the first) is held for Delay
//
// An AfterEvents beyond the response's last event fires just before the terminal event.
package sim
