package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest function name the Responses API accepts.
const MaxNameLen = 64

// toolName is the model-facing name of tool on server: mcp__server__tool,
// with every character the API refuses (it allows [a-zA-Z0-9_-]) replaced
// by '_'. A name past MaxNameLen keeps its start and ends in a hash of the
// whole, so that two long names stay apart.
func toolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= MaxNameLen {
		return name
	}
	return name[:MaxNameLen-9] + "_" + shortHash(server+"\x00"+tool)
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// shortHash is 8 hex digits of s's SHA-256.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// unique returns name, or when taken already a variant of it ending in a
// hash of key that is not.
func unique(name, key string, taken map[string]bool) string {
	for i := 0; taken[name]; i++ {
		suffix := "_" + shortHash(key+strings.Repeat("\x00", i))
		name = name[:min(len(name), MaxNameLen-len(suffix))] + suffix
	}
	return name
}
