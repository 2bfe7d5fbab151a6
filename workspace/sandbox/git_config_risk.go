package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// maxGitConfigSize bounds the git configuration hearth reads to check it;
// a larger one is not read, and is taken for one that runs a program.
const maxGitConfigSize = 1 << 20

// runsProgram says whether git runs a program named by the setting
// section.subsection.key (section and key lower-cased, subsection as
// written; "" when there is none) with value, and if so why, for the
// model: the settings git executes as a command or a shell line, and
// those that pull in another file that could hold one (include.path).
func runsProgram(section, subsection, key, value string) string {
	name := section + "." + key
	if subsection != "" {
		name = section + "." + subsection + "." + key
	}
	runs := name + " runs a program"
	switch section {
	case "core":
		switch key {
		case "fsmonitor", "sshcommand", "editor", "pager", "askpass", "gitproxy", "alternaterefscommand":
			return runs
		case "hookspath":
			return name + " points git at hooks it runs"
		}
	case "sequence":
		if key == "editor" {
			return runs
		}
	case "diff":
		if (subsection == "" && key == "external") || (subsection != "" && (key == "textconv" || key == "command")) {
			return runs
		}
	case "filter":
		if key == "clean" || key == "smudge" || key == "process" {
			return runs
		}
	case "merge":
		if subsection != "" && key == "driver" {
			return runs
		}
	case "difftool", "mergetool", "browser", "man":
		if subsection != "" && (key == "cmd" || key == "path") {
			return runs
		}
	case "credential":
		if key == "helper" {
			return runs
		}
	case "gpg":
		if key == "program" {
			return runs
		}
	case "pager":
		return runs
	case "alias":
		if strings.HasPrefix(strings.TrimSpace(value), "!") {
			return name + " runs a shell command"
		}
	case "uploadpack":
		if key == "packobjectshook" {
			return runs
		}
	case "remote":
		if key == "uploadpack" || key == "receivepack" {
			return runs
		}
	case "submodule":
		if key == "update" && strings.HasPrefix(strings.TrimSpace(value), "!") {
			return name + " runs a shell command"
		}
	case "include", "includeif":
		if key == "path" {
			return name + " includes another file, which could set any of these"
		}
	}
	return ""
}

// gitConfigRisks reads the git configuration file at path and says what
// in it runs a program, sorted; nil for a file that is missing or
// harmless. A file that cannot be read or parsed is a risk of its own:
// git's parser may read in it what this one cannot.
func gitConfigRisks(path string) []string {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return []string{fmt.Sprintf("its %s cannot be checked (%v)", baseName(path), err)}
	case !fi.Mode().IsRegular() || fi.Size() > maxGitConfigSize:
		return []string{fmt.Sprintf("its %s is too large or not a regular file to check", baseName(path))}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("its %s cannot be checked (%v)", baseName(path), err)}
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return []string{fmt.Sprintf("its %s cannot be parsed (%v), so what it runs cannot be told", baseName(path), err)}
	}
	seen := map[string]bool{}
	check := func(section, subsection string, opts gitconfig.Options) {
		for _, o := range opts {
			if why := runsProgram(strings.ToLower(section), subsection, strings.ToLower(o.Key), o.Value); why != "" {
				seen[why] = true
			}
		}
	}
	for _, s := range cfg.Sections {
		check(s.Name, "", s.Options)
		for _, ss := range s.Subsections {
			check(s.Name, ss.Name, ss.Options)
		}
	}
	risks := make([]string, 0, len(seen))
	for why := range seen {
		risks = append(risks, why)
	}
	sort.Strings(risks)
	return risks
}

// baseName is the last element of a slash- or OS-separated path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
