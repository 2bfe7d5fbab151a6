module github.com/hearthd/hearth

go 1.26.0

require (
	github.com/coder/acp-go-sdk v0.13.5
	github.com/gorilla/websocket v1.5.3
	github.com/mattn/go-sqlite3 v1.14.53
	go.lsp.dev/jsonrpc2 v1.0.1
	golang.org/x/sys v0.47.0
)

require github.com/go-json-experiment/json v0.0.0-20260601182631-00ed12fed2a6 // indirect
