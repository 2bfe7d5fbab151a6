// Package sim is a protocol-faithful simulator of OpenAI's Responses API over WebSocket and
// its HTTP/SSE twin, for hearth's tests, benchmarks and demo (`hearth sim --addr`). It follows
// the protocol as docs/ARCHITECTURE.md ("The Responses protocol") states it, and the details
// below. It imports no other hearth package on purpose but session/wsdeflate (the wire's
// compression, a leaf that knows frames, not the protocol): it must not share code with the
// client in session/, so that it catches the client's bugs.
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
//	(*Server).PingsReceived() int              pings clients sent on WebSocket connections
//	(*Server).WireBytes() (in, out int64)      bytes through the TCP connections of Start/ListenAndServe
//	(*Server).InjectFault(Fault)               queue a fault; ClearFaults, PendingFaults
//	(*Server).DropConnections() int            drop every live WebSocket without a close frame
//	Cost.ProcessDelay(inputBytes)              the processing delay the cost model charges
//	ParseLaneMode, ParseReasoningMode          read the hearth sim --lanes / --reasoning values
//	ParseDeflateMode                           reads the hearth sim --deflate value
//
// Options beyond auth, age and cost: Lanes (LanesOn, LanesIgnore, LanesRefuse) and the older
// DisableLanes; Reasoning (ReasoningAuto, ReasoningAlways, ReasoningNever) and Secret;
// ContextWindow, Windows and Models; PingInterval and IgnorePings; Hint. Each is described below.
//
// Routes: GET {base}/responses upgraded to WebSocket; POST {base}/responses, streaming SSE
// when the body has stream:true (else the final response as JSON); POST
// {base}/responses/compact, the API's own compaction (compact.go says what follows OpenAI's
// reference and what is assumed): {id, object: "response.compaction", output, usage}, the
// output the input's user messages and one sealed compaction item ({type: "compaction", id,
// encrypted_content}) that a later request may carry instead of what it replaced; its record
// has Endpoint EndpointCompact. context_management on a create is not modelled: the field is
// ignored like any unknown one. GET {base}/models, the model list (Options.Models, else the
// default model), which checks a key for free. With Options.APIKey set all require
// "Authorization: Bearer <key>" (401 JSON error otherwise); empty accepts all.
//
// # WebSocket protocol
//
// Each client frame is one text frame holding a JSON object with a string type. A binary frame
// closes the connection with 1003, a non-JSON or untyped frame with 1002. Types other than
// response.create and response.steer get an unknown_event_type error event. response.steer
// queues user input into a running response (steer.go; docs/SIMULATOR.md says what it
// answers; Options.NoSteering refuses it). response.create is the flat HTTP body:
// background is rejected (unsupported_parameter); stream is accepted and
// ignored (responses always stream; OpenAI's own clients, Codex among them,
// send stream:true anyway); unknown fields are ignored. store, include, reasoning and
// prompt_cache_key are read on both transports and recorded in Received (a value of the
// wrong type is invalid_type). generate:false is a warm-up: response.created then
// response.completed with output [].
//
// Pings: the server answers client pings with a pong (not with Options.IgnorePings) and
// counts them (PingsReceived); with Options.PingInterval > 0 it pings every connection at
// that interval. permessage-deflate (RFC 7692) is negotiated when the client offers it, by
// Options.Deflate: with context takeover as the client offers it (DeflateTakeover, the default:
// Codex offers takeover), without it either way (DeflateNoTakeover, gorilla's server), or not
// at all (DeflateOff); package wsdeflate compresses below gorilla. Received.Compressed and
// Extension record it per connection, and WireBytes (and each record's WireIn and WireOut)
// count what really crossed the wire (compressed frames, headers included) on the Server's own
// listener.
//
// previous_response_id resolves against a connection-local cache that holds only the latest
// response of each lane (store:false): a miss or an older response gives
// previous_response_not_found. A request may continue the latest response of another lane
// (a fork: that lane keeps it, and the requesting lane's latest becomes the new response).
// Any failure of a continuation (error event or response.failed) evicts the requesting
// lane's cached response, never another lane's. The effective input is the parent's
// input and output followed by the new input. A new connection starts with an empty cache.
//
// Lanes (Options.Lanes = LanesOn, the default): stream_id (1–256 of [A-Za-z0-9_.-], else
// invalid_stream_id) names a lane; a lane runs its requests FIFO, lanes run concurrently and
// their events carry stream_id (default-lane events carry none). At most MaxActiveResponses
// (16) run at once per connection, the rest queue in arrival order; the MaxStreamNames+1-th
// (33rd) distinct name gets websocket_stream_limit_reached. The lane-less servers of §5 run
// one response at a time per connection and queue the rest: LanesIgnore ignores stream_id
// (never echoed, one FIFO lane and one cache slot per connection); LanesRefuse answers a
// create carrying it with 400 unknown_parameter ("Unknown parameter: 'stream_id'.", no
// stream_id member). The older Options.DisableLanes (it wins over Lanes) also runs one at a
// time but refuses stream_id with invalid_stream_id, echoing it.
//
// After Options.MaxAge (default 60 min) the next create is answered with the connection-wide
// error websocket_connection_limit_reached (status 400, no stream_id) and the connection is
// closed with 1000. With Options.PushAgeLimit the error is pushed at MaxAge as soon as no
// response is running, without waiting for a create.
//
// Each response's events carry sequence_number from 0: response.created, response.in_progress,
// then per output item output_item.added, (content_part.added, output_text.delta*,
// output_text.done, content_part.done) or (function_call_arguments.delta*,
// function_call_arguments.done) or, for a custom tool's call, (custom_tool_call_input.delta*,
// custom_tool_call_input.done with the whole input), output_item.done, and one terminal event (response.completed,
// response.incomplete or response.failed) carrying the full response with usage. Errors on
// WebSocket are nested ({type:"error",status,error:{type,code,message,param}}), on SSE flat;
// request errors echo the request's stream_id on a lane and leave the connection open.
//
// # Reasoning models and store:false (§3a)
//
// Options.Reasoning: under ReasoningAuto (default) every model reasons except names starting
// with gpt-4, gpt-3.5 or chatgpt-4; ReasoningAlways and ReasoningNever override. A generated
// response of a reasoning model opens with a reasoning item at output_index 0
// ({type:"reasoning",id:"rs_…",summary:[…]}, added with summary [] … done), before the text
// or call at index 1. With reasoning.summary auto|concise|detailed the summary streams
// (reasoning_summary_part.added, reasoning_summary_text.delta* one per word,
// reasoning_summary_text.done, reasoning_summary_part.done) and the final item holds
// [{type:"summary_text",text}]: "Thinking about: <first 60 characters of the user's text>",
// or "Deciding to call <tool>." for a call. usage.output_tokens_details.reasoning_tokens is
// the summary's words + 8, included in output_tokens. With include
// ["reasoning.encrypted_content"] the item carries encrypted_content: base64url of a JSON
// {id, summary, model} followed by its HMAC-SHA256 under Options.Secret (empty: a fixed
// built-in secret, so that a new simulator accepts what an earlier one issued, as the real
// API does across connections).
//
// reasoning.effort must be none|minimal|low|medium|high|xhigh and reasoning.summary one of
// the three above (else invalid_value with param reasoning.effort / reasoning.summary); a
// non-reasoning model given an effort other than none gets unsupported_parameter (param
// reasoning.effort). A reasoning input item whose encrypted_content this secret did not seal
// gets 400 invalid_encrypted_content (param null, the message names the item's id or
// input[i]); one with neither id nor encrypted_content is accepted and carries nothing.
//
// store absent means true. With store:false, any item of the request's own input (not the
// cached items a previous_response_id brings) whose id has a server-issued shape (lowercase
// prefix, "_", 16 or more hex digits: rs_…, msg_…, fc_…) refuses the whole request (ids a
// client made itself, such as Codex's msg_<uuid>, are accepted, as the real API does): status 404, type invalid_request_error, code null, param input, "Item with id 'ID'
// not found. Items are not persisted when `store` is set to false. Try again with `store` set
// to true, or remove this item from your input." (Received.Outcome OutcomeItemNotFound). With
// store true ids are accepted. Over HTTP a response created with store true (or absent) is
// kept in the Server's store (the latest MaxStoredResponses) before its terminal event is
// sent, and a later HTTP request's previous_response_id continues from it — its input and
// output, then the new input — whatever connection it comes on; a store:false response is not
// kept, so continuing from it is previous_response_not_found. Over WebSocket
// previous_response_id resolves against the connection-local cache alone (stricter than the
// real API, which also loads stored responses there).
//
// Options.Models, when set, lists the models that exist: another (or the default, when a
// request names none) gets 404 model_not_found. Options.Windows (model → tokens) gives a model
// its window, Options.ContextWindow every other model's (0 = unlimited; `hearth sim --window`):
// an effective input above it gets the real API's refusal, 400 context_length_exceeded
// (type invalid_request_error, param input, "Your input exceeds the context window of this
// model. Please adjust your input and try again."). Validation failures are answered in order
// on the request's lane and consume no fault.
//
// Tokens are counted one way, deterministically, everywhere (usage, the window,
// Received.InputTokens): four bytes of JSON a token, rounded up. A request's input is its
// effective input — the cached or stored items a previous_response_id brings, then the new
// items, each counted by its JSON as sent — plus the bytes of the instructions and tools
// fields; an image counts its tiles (below), not its data URL. output_tokens is what the
// output items count for as input when they are sent back (their JSON at four bytes a token),
// and at least the deltas streamed plus the reasoning tokens; so a response's input_tokens +
// output_tokens is what a request chained on it holds before its new items. The real API
// counts with the model's tokenizer (English and code average 3–4 bytes a token, JSON
// framing far less): a client that estimates by bytes/4 is right here and close there.
//
// # Custom tools (custom.go)
//
// A tool {type:"custom", name, description?, format?} takes freeform text: format absent, null
// or {type:"text"}, or {type:"grammar", syntax:"lark"|"regex", definition}; a custom tool
// without a name gets 400 missing_required_parameter (param tools[i].name), another format
// type or syntax invalid_value, a grammar without a string definition
// missing_required_parameter or invalid_type (param tools[i].format.definition). The grammar
// itself is not parsed. The model's call is {type:"custom_tool_call", id:"ctc_…", call_id,
// name, input}, and the client answers with {type:"custom_tool_call_output", call_id, output}.
// A tool output of the request's own input pairs with a call of its own kind earlier in the
// effective input (function_call_output with function_call, custom_tool_call_output with
// custom_tool_call), by call_id; one that pairs with none gets 400, code null, param input,
// "No tool call found for function call output with call_id ID." (or "custom tool call
// output"), as the real API answers.
//
// # Hosted web search (search.go)
//
// A tool {type:"web_search"} (or web_search_2025_08_26) takes only the API's fields —
// external_web_access (absent = true), filters {allowed_domains}, user_location
// {type:"approximate", country, region, city, timezone}, search_context_size, and
// search_content_types (text, image), which the published schema lacks but Codex sends and
// the API takes — and refuses any
// other (unknown_parameter, param tools[i].NAME), a wrong type (invalid_type) or value
// (invalid_value); with reasoning.effort minimal the request gets the API's 400 "The following
// tools cannot be used with reasoning.effort 'minimal': web_search." (param tools, code null).
// "search QUERY" makes the model search: a web_search_call {id:"ws_…", status, action} added
// with status in_progress and no action, response.web_search_call.in_progress, .searching and
// .completed (item_id, output_index), the item done with action {type:"search", query} (and
// sources with include web_search_call.action.sources), then in the same response a message
// citing an example.com page and saying whether the search was live or cached. A
// web_search_call sent back as input needs status (in_progress|searching|completed|failed) and
// an action of a known type (find_in_page with url and pattern), and has no other member than
// id, type, status and action; its ws_ id under store:false refuses the request as any
// server-issued id does.
//
// # The scripted model
//
// The turn is everything after the last user message; the script reads that message's text:
//
//	sim:calls=N    N function calls, one per response; text once N outputs are in the turn
//	sim:tool=NAME  the tool to call (default: the first function tool in tools)
//	sim:args=JSON  compact JSON object of arguments (default {"path":"."})
//	sim:tokens=N   the text answer is "tok0 tok1 … tok(N-1)"
//	sim:chunk=K    its deltas carry K words each (default one word a delta)
//	sim:custom=NAME custom tool calls of NAME instead, each with sim:input=TEXT (a JSON string
//	               without spaces) as its input; one unless sim:calls says otherwise
//	sim:steps=JSON different function calls in order, one per response: a compact JSON array of
//	               [NAME, ARGS] pairs; the string "$session" in ARGS becomes the session ID the
//	               last tool output gave (exec_command's process, for write_stdin)
//
// Without a directive, a text that starts with a plain word (words.go; WordsHelp lists them,
// `hearth sim --help` prints it) makes the first response call that tool, when the request
// offers it: "read PATH" read_file, "list [PATH]" list_dir, "grep PATTERN [PATH]" grep,
// "write PATH TEXT" write_file with TEXT and a newline, "edit PATH OLD NEW" edit_file (OLD one
// word, NEW the rest), "patch PATH OLD NEW" apply_patch with a one-hunk patch turning the line
// OLD (one word) into NEW (a custom tool call when the request offers apply_patch as a custom
// tool, else a function call taking {input}), "plan STEP; STEP …" update_plan (the first step
// in_progress, the others pending), "run COMMAND" shell (exec_command where shell is not offered),
// "view PATH" view_image, "search QUERY" the hosted web search (above); "slow" calls nothing and
// answers with about 100 words spaced 100 ms apart (or the cost model's gap, when longer), to
// try cancelling. Failing that, "read <path>" anywhere calls read_file and "list" or "files" anywhere list_dir {"path":"."}.
//
// Otherwise it answers "You said: <text>" (followed by a blank line and Options.Hint when set:
// the daemon's simulator names the words there, NoKeyHint), or after tool outputs "I called
// <name> <count> time(s). Last result:\n" plus the first 20 lines of the last output (and a line saying so when there were more). When the user's message
// (or, after tool outputs, the last output) carries images, the answer ends with what the
// model saw: "\n[saw 1 image: image/png 7x5 (92 bytes)]". Text streams one delta per word;
// the deltas concatenate to the final text exactly.
//
// # Images
//
// An input_image part is accepted in a user, system or developer message's content and in a
// function_call_output's output, which is then a list of input_text, input_image and
// input_file parts (anything else there: invalid_value, param input[i].output[j].type). Its
// image_url is an http(s) URL (accepted, never fetched) or a data URL
// "data:<mime>;base64,<bytes>" with mime image/png, image/jpeg, image/gif or image/webp; a
// malformed one gets the real API's 400 invalid_value "Invalid 'input[i].content[j].image_url'.
// Expected a base64-encoded data URL with an image MIME type (…), but got <what>." (no
// 'data:' prefix, unsupported MIME type, empty or invalid base64), and bytes that are not an
// image of that type, or over 20 MiB, get 400 invalid_image_format. detail must be low, high or
// auto; an assistant message may not carry input_image. Usage counts an image as the API does
// (85 tokens at low detail, else 85 + 170 per 512-pixel tile after scaling to fit 2048×2048
// and a shortest side of 768), not by the bytes of its data URL; so does ContextWindow.
//
// # Cost model
//
// Options.Cost (zero = free): Handshake delays each WebSocket upgrade; PerRequest is a fixed
// delay per create; PerInputKB is charged per 1024 bytes of the request's input field — only
// the new items of a chained request, the whole transcript of a full one; FirstToken delays
// the first output item; TokensPerSecond paces deltas (0 = unpaced). Received.ProcessDelay
// records PerRequest + PerInputKB×InputBytes/1024 for each create, Received.OutputDelay the
// pacing its output took (FirstToken plus one 1/TokensPerSecond gap between consecutive
// deltas of an item), and Cost.String prints the parameters for a benchmark's report. A
// chained HTTP request (store) is charged like a chained WebSocket one: only its new input.
// A response keeps to an absolute schedule begun when its processing begins: a timer that
// fires late shortens the next wait, so lateness does not add up over a response's deltas
// (only the last wait's can reach the answer). Received.At is when the request's frame began
// to arrive (before the server inflated and parsed it), Received.AnsweredAt when its terminal
// event had been written: between one's AnsweredAt and the next's At is the client's time.
//
// # Rate limits (ratelimit.go)
//
// The upgrade's answer and every HTTP answer carry x-ratelimit-{limit,remaining,reset}-{requests,tokens}:
// Options.RateLimitRequests and RateLimitTokens (DefaultRateLimitRequests, DefaultRateLimitTokens), what
// the current one-minute window left (each create counts, its bytes / 4 as tokens) and when it ends. The
// counts refuse nothing; Server.RateLimit(n, reset) and Options.RateLimited refuse the next creates with
// FaultRateLimit, whose Delay is the reset ("Please try again in 2s.", and over HTTP the headers).
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
//	FaultInsufficientQuota   429 insufficient_quota (type insufficient_quota) instead of the response
//	FaultContextLength       400 context_length_exceeded (param input) instead of the response
//	FaultServerError         500 server_error instead of the response
//	FaultInvalidAPIKey       401 invalid_api_key instead of the response
//	FaultSuccessorFailed     a response that ends steered gets no successor: each queued steer comes back in response.steer.failed, code successor_creation_failed (WebSocket)
//
// The error faults are WebSocket error events (echoing stream_id on a lane, the connection
// stays open) or, on HTTP, the status with a JSON error body.
//
// An AfterEvents beyond the response's last event fires just before the terminal event.
//
// # Inside
//
// The Server owns its listener, its routes and Close; its state lives in parts that last as
// long as it does: the recorder (records and pings, record.go), the faultQueue (faults.go),
// the connSet of live WebSocket connections (conns.go), the responseStore of store:true
// responses (stored.go) and the wireConns of its own listener (wire_count.go). Each WebSocket
// connection is a wsConn with its lane scheduler and laneCache (ws.go, lanes.go, cache.go);
// each POST an httpExchange (exchange.go); each response a reply (events.go). The rules a
// request is checked against are methods of Options (validate.go).
package sim
