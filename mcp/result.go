package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxOutput bounds the text of one call's result sent to the model; past it
// the head and tail are kept.
const MaxOutput = 128 << 10

// Result is the outcome of one call, for the model.
type Result struct {
	Output  string
	IsError bool
}

// resultText renders a tool's result as the text the model reads: text
// blocks as they are, other blocks described, structured content as JSON
// when there is nothing else.
func resultText(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			switch {
			case c.Resource == nil:
			case c.Resource.Text != "":
				parts = append(parts, c.Resource.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes, not shown]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return clip(strings.Join(parts, "\n"))
}

// clip keeps the head and tail of s within MaxOutput.
func clip(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	half := MaxOutput / 2
	return fmt.Sprintf("%s\n… [%d bytes left out] …\n%s", s[:half], len(s)-2*half, s[len(s)-half:])
}
