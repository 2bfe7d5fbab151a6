package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// A session begins with the AGENTS.md files that apply where it works, in
// one user message framed as the families learned it: "# AGENTS.md
// instructions for <working directory>", then the files inside
// <INSTRUCTIONS>. The user's own file comes first (hearth's configuration
// directory: for every repository), then the repository's from its root
// down to the session's working directory, root first, so that the deeper
// files, which win, come last. In each directory an AGENTS.override.md
// takes the place of the AGENTS.md. hearth's own notes stay inside the
// framing: each file is headed by its path and what it applies to, and a
// file cut to fit says so. They are read once, when the session begins (a
// change later reaches the model as any file's does, through the context
// delta).

// The framing of the AGENTS.md message.
const (
	agentsHeading = "# AGENTS.md instructions for "
	agentsOpen    = "<INSTRUCTIONS>"
	agentsClose   = "</INSTRUCTIONS>"
)

// hearthContext reports whether a user message's text is one of hearth's
// framings (the environment, the AGENTS.md files) rather than the user's
// words: an editor's replay leaves it out.
func hearthContext(text string) bool {
	return strings.HasPrefix(text, environmentOpen) && strings.HasSuffix(text, environmentClose) ||
		strings.HasPrefix(text, agentsHeading) && strings.HasSuffix(text, agentsClose)
}

// mayBeContext reports whether a user message's content (its JSON) may be
// one of hearth's framings, by its first bytes, so that a replay decodes
// only those.
func mayBeContext(content []byte) bool {
	head := content[:min(len(content), 96)]
	return bytes.Contains(head, []byte("environment_context")) || bytes.Contains(head, []byte(agentsHeading))
}

// agentsLimit bounds the files' text in all: a larger set is cut, each file
// keeping a fair share (agentsShares), with a note saying so.
const agentsLimit = 32 << 10

// Names of the files read in each directory, the first found winning.
const (
	agentsOverrideName = "AGENTS.override.md"
	agentsName         = "AGENTS.md"
)

// agentsFile is one AGENTS.md the session begins with; it lives for one
// agentsContext.
type agentsFile struct {
	path    string // absolute
	applies string // what it applies to, for its heading
	inRoot  bool   // inside the workspace: the model can read the rest with read_file
	text    []byte // at most agentsLimit bytes of it
	size    int64  // the whole file's
}

// userAgentsDir is where the user's own AGENTS.md lives:
// $XDG_CONFIG_HOME/hearth, else ~/.config/hearth ("" when neither is known).
func userAgentsDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "hearth")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "hearth")
	}
	return ""
}

// agentsContext is the initial item that gives a session working in cwd
// (absolute; dir relative to root, "" for the root) its AGENTS.md files,
// or nothing when there are none.
func agentsContext(root *workspace.Root, dir, cwd string) []json.RawMessage {
	files := agentsFiles(root, dir)
	if len(files) == 0 {
		return nil
	}
	return []json.RawMessage{session.UserMessage(agentsHeading + cwd + "\n\n" + agentsOpen + "\n" + agentsText(files) + agentsClose)}
}

// agentsFiles reads the files that apply to dir: the user's, then one per
// directory from the root down to dir. Files inside the root are read
// through its handle (never out of it); unreadable and empty ones are
// left out.
func agentsFiles(root *workspace.Root, dir string) []agentsFile {
	var files []agentsFile
	if u := userAgentsDir(); u != "" {
		if f, ok := userAgentsFile(u); ok {
			files = append(files, f)
		}
	}
	dirs := []string{""}
	if dir != "" {
		dirs = append(dirs, strings.Split(filepath.ToSlash(dir), "/")...)
	}
	rel := ""
	for _, part := range dirs {
		if part != "" {
			rel = filepath.Join(rel, part)
		}
		abs := filepath.Join(root.Path(), rel)
		applies := "applies to " + abs + " and below"
		if rel == "" {
			applies = "the repository root: applies to the whole workspace"
		}
		for _, name := range []string{agentsOverrideName, agentsName} {
			text, size, err := root.ReadFileHead(filepath.Join(rel, name), agentsLimit)
			if err != nil {
				continue
			}
			if len(text) > 0 {
				files = append(files, agentsFile{path: filepath.Join(abs, name), applies: applies, inRoot: true, text: text, size: size})
			}
			break // an override that exists replaces the AGENTS.md beside it, even empty
		}
	}
	return files
}

// userAgentsFile reads the user's own AGENTS.md (or AGENTS.override.md) in
// dir, outside any workspace.
func userAgentsFile(dir string) (agentsFile, bool) {
	for _, name := range []string{agentsOverrideName, agentsName} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() { // a FIFO would block the open
			return agentsFile{}, false
		}
		f, err := os.Open(p)
		if err != nil {
			return agentsFile{}, false
		}
		text, err := io.ReadAll(io.LimitReader(f, agentsLimit))
		f.Close()
		if err != nil || len(text) == 0 {
			return agentsFile{}, false
		}
		return agentsFile{path: p, applies: "the user's own: applies to every repository", text: text, size: fi.Size()}, true
	}
	return agentsFile{}, false
}

// agentsText is what goes inside <INSTRUCTIONS>: what the files are and
// how they rank, then each file under its heading, cut to its share of
// agentsLimit; it ends with a newline.
func agentsText(files []agentsFile) string {
	var b strings.Builder
	b.WriteString("(From hearth, read when this session began: the user's own file first, then the repository's from its root " +
		"down to the working directory; a deeper file wins. AGENTS.md files in other directories apply to the files under " +
		"them: read them before changing files there.)\n")
	sizes := make([]int, len(files))
	for i, f := range files {
		sizes[i] = len(f.text)
	}
	for i, share := range agentsShares(sizes, agentsLimit) {
		f := files[i]
		fmt.Fprintf(&b, "\n==> %s (%s) <==\n", f.path, f.applies)
		text := cutText(f.text, share)
		b.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			b.WriteByte('\n')
		}
		if int64(len(text)) < f.size {
			rest := "the rest is not shown"
			if f.inRoot {
				rest = "read the rest with read_file"
			}
			fmt.Fprintf(&b, "[cut: this file is %d bytes and hearth gives the AGENTS.md files %d KiB in all; %s]\n", f.size, agentsLimit>>10, rest)
		}
	}
	return b.String()
}

// agentsShares divides limit among files of the given sizes: each gets
// all of itself when the files fit, else an equal share, a file smaller
// than its share leaving the rest to the others. No file crowds out the
// others, the deepest (the most specific) included.
func agentsShares(sizes []int, limit int) []int {
	shares := make([]int, len(sizes))
	left, open := limit, len(sizes)
	for open > 0 {
		each := left / open
		settled := false
		for i, s := range sizes {
			if shares[i] == 0 && s <= each && s > 0 {
				shares[i], left, open, settled = s, left-s, open-1, true
			}
		}
		if !settled {
			for i, s := range sizes {
				if shares[i] == 0 && s > 0 {
					shares[i] = each
				}
			}
			break
		}
	}
	return shares
}

// cutText is text cut to at most n bytes: at the last line end within them
// when that keeps at least half, else at a character boundary.
func cutText(text []byte, n int) []byte {
	if len(text) <= n {
		return text
	}
	text = text[:n]
	if i := strings.LastIndexByte(string(text), '\n'); i >= n/2 {
		return text[:i+1]
	}
	for i := 0; i < utf8.UTFMax && len(text) > 0; i++ { // a character cut in two goes
		if r, size := utf8.DecodeLastRune(text); r != utf8.RuneError || size > 1 {
			break
		}
		text = text[:len(text)-1]
	}
	return text
}
