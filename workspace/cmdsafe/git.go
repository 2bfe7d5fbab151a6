package cmdsafe

import "strings"

// gitReadOnly: git with only harmless global options (-C DIR, --no-pager)
// and a subcommand that reads (gitReadOnlyCommands), none of whose
// arguments writes a file (--output) or starts a program (grep's
// --open-files-in-pager); branch only lists. What git reads from the
// repository's own configuration may still start a program (a textconv,
// an fsmonitor): the read-only sandbox is the wall for that.
func gitReadOnly(args []Word) bool {
	i := 0
	for ; i < len(args); i++ {
		switch args[i].Text {
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects":
			continue
		case "-C":
			i++
			continue
		}
		break
	}
	if i >= len(args) {
		return false
	}
	sub, rest := args[i].Text, args[i+1:]
	check, ok := gitReadOnlyCommands[sub]
	if !ok {
		return false
	}
	for _, a := range rest {
		if longIs(a.Text, "output") {
			return false
		}
	}
	return check == nil || check(rest)
}

// gitReadOnlyCommands are the subcommands that read; a check, when set,
// refuses the arguments that would make one write or start a program.
var gitReadOnlyCommands = map[string]func([]Word) bool{
	"status": nil, "diff": nil, "log": nil, "show": nil, "rev-parse": nil, "ls-files": nil,
	"blame": nil, "ls-tree": nil, "rev-list": nil, "describe": nil,
	"grep":   refuse("O", "open-files-in-pager"),
	"branch": gitBranchLists,
}

// gitBranchListFlags are branch's options that only list, and whether each
// takes a value (which may follow as the next argument).
var gitBranchListFlags = map[string]bool{
	"--all": false, "--remotes": false, "--verbose": false, "--list": false, "--show-current": false,
	"--no-color": false, "--color": false, "--column": false, "--no-column": false, "--ignore-case": false,
	"--omit-empty": false, "--abbrev": false, "--no-abbrev": false,
	"--contains": true, "--no-contains": true, "--merged": true, "--no-merged": true, "--points-at": true,
	"--sort": true, "--format": true,
}

// gitBranchLists: git branch with listing options only; names (patterns)
// only after --list or -l, since a bare name creates a branch.
func gitBranchLists(args []Word) bool {
	list, names := false, 0
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		name, _, hasValue := strings.Cut(t, "=")
		switch {
		case strings.HasPrefix(t, "--"):
			takes, ok := gitBranchListFlags[name]
			if !ok {
				return false
			}
			list = list || name == "--list"
			if takes && !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1].Text, "-") {
				i++
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			if strings.Trim(t[1:], "arvli") != "" {
				return false
			}
			list = list || strings.Contains(t, "l")
		default:
			names++
		}
	}
	return names == 0 || list
}
