// Package mcptest is a tiny MCP stdio server for hearth's tests, built on
// the official SDK's server side. A test binary runs it by re-executing
// itself with Subcommand as its first argument (its TestMain calls Serve).
//
// Its tools:
//
//	echo {text}   answers "echo: TEXT" (not annotated: it needs permission)
//	peek          answers "peeked" (annotated readOnlyHint)
//	crash         exits the process in the middle of the call
//	hang          never answers
//
// Imports: none of hearth's; only tests (and editors' test suites) use it.
package mcptest

import (
	"context"
	"fmt"
	"os"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subcommand is the first argument under which a test binary serves.
const Subcommand = "__mcp-test-server"

// Serve serves the tools on stdin/stdout until stdin closes and returns the
// exit code. args are the arguments after Subcommand: "--pid-file PATH"
// makes it write its pid there first.
func Serve(args []string) int {
	if len(args) == 2 && args[0] == "--pid-file" {
		if err := os.WriteFile(args[1], []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Fprintln(os.Stderr, "mcptest: serving")
	if err := NewServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		return 1
	}
	return 0
}

// NewServer returns the server with its tools, for any transport (crash
// exits the process it runs in: call it only over stdio).
func NewServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "v1"}, nil)
	type echoArgs struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "peek", Description: "Looks without touching.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "peeked"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exits the server mid-call."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "mcptest: crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answers."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			select {} // ignores cancellation too: a server that is wedged
		})
	return s
}
