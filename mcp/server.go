package mcp

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Transports an editor may give a server.
const (
	Stdio = "stdio"
	HTTP  = "http" // MCP's streamable HTTP
	SSE   = "sse"  // the older HTTP+SSE transport
)

// Server is one MCP server as the editor configured it. A plain value,
// built per session/new or session/load.
type Server struct {
	Name      string
	Transport string // Stdio, HTTP or SSE

	// Stdio: the program, its arguments and the variables set on top of the
	// base environment (Options.Env), as "NAME=value".
	Command string
	Args    []string
	Env     []string

	// HTTP, SSE: the endpoint and the headers sent with every request.
	URL     string
	Headers [][2]string
}

// FieldError is what is wrong with one field of a Server's configuration.
type FieldError struct {
	Field  string // ACP's name of the field: name, command, env, url, type
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Validate returns a *FieldError saying what is wrong with s, or nil.
func (s Server) Validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return &FieldError{"name", "is empty"}
	}
	switch s.Transport {
	case Stdio:
		if strings.TrimSpace(s.Command) == "" {
			return &FieldError{"command", "is empty"}
		}
		for _, kv := range s.Env {
			if name, _, _ := strings.Cut(kv, "="); name == "" || strings.ContainsAny(kv, "\x00") {
				return &FieldError{"env", fmt.Sprintf("%q is not a variable", kv)}
			}
		}
	case HTTP, SSE:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &FieldError{"url", fmt.Sprintf("%q is not an http(s) URL", s.URL)}
		}
	default:
		return &FieldError{"type", fmt.Sprintf("unknown transport %q (stdio, http or sse)", s.Transport)}
	}
	return nil
}

// Same reports whether a and b configure the same servers, in any order
// (an editor may list them differently each time; the tools are sorted).
func Same(a, b []Server) bool {
	byName := func(x, y Server) int { return strings.Compare(x.Name, y.Name) }
	a, b = slices.SortedFunc(slices.Values(a), byName), slices.SortedFunc(slices.Values(b), byName)
	return slices.EqualFunc(a, b, func(x, y Server) bool {
		return x.Name == y.Name && x.Transport == y.Transport && x.Command == y.Command &&
			slices.Equal(x.Args, y.Args) && slices.Equal(x.Env, y.Env) && x.URL == y.URL &&
			slices.Equal(x.Headers, y.Headers)
	})
}
