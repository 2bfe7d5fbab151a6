package workspace

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// Git runs what its repository tells it to: hooks, core.fsmonitor,
// core.sshCommand, aliases, filters... A write into a git directory is a
// program the user runs at their next `git status`. So the file tools
// (write_file, edit_file, apply_patch, as a tool or through the shell)
// never write, create, delete or move a file inside one: not in the
// workspace's own git directory (wherever its .git leads), and not in any
// path with a component named .git (a repository planted below the root,
// or a .git file pointing git elsewhere). Reading stays allowed. Repository
// changes go through git itself, whose commands do not write hooks.

// gitWriteRefused is the model's message when abs, a destination Resolve
// gave for the model's path p (symlinks evaluated), must not be written
// because it is inside a git directory; "" when it may be. shown is the
// destination as the model is shown it. Every write path of the file tools
// calls it: loadTarget, for each file a call plans to write or remove, and
// recheckGit just before the write or removal.
func (fw fileWriter) gitWriteRefused(p, abs, shown string) string {
	lexical := filepath.Join(fw.at.dir, p)
	if filepath.IsAbs(p) {
		lexical = fw.at.root.name(filepath.Clean(p))
	}
	why := ""
	switch rel := fw.at.root.name(abs); {
	case sandbox.IsGitName(filepath.Base(lexical)):
		why = "is named .git: git takes it for a repository, or a pointer to one"
	case sandbox.HasGitComponent(lexical):
		why = "is inside a .git directory, git's own"
	case sandbox.HasGitComponent(rel):
		why = fmt.Sprintf("leads through a symlink to %s, inside a .git directory", filepath.ToSlash(rel))
	default:
		for _, g := range sandbox.GitDirs(fw.at.root.Path()) {
			if sandbox.UnderDir(abs, g) {
				why = "is inside the workspace's git directory " + g
				break
			}
		}
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("refused: %s %s. hearth's file tools do not write, create, delete or move files there: "+
		"git runs what those files say (hooks, core.fsmonitor and other settings), so a change there is a program the user's next git command would run. "+
		"Nothing was changed. Make repository changes with git commands in the shell tool (git config, git commit, ...), or ask the user to make them",
		shown, why)
}

// recheckGit refuses c, a change planned a moment ago, when its path now
// leads into a git directory: a directory on the way was swapped for a
// symlink since loadTarget looked.
func (fw fileWriter) recheckGit(c *fileChange) error {
	abs, err := fw.at.root.Resolve(c.rel)
	if err != nil {
		return err
	}
	atRoot := fw
	atRoot.at.dir = "" // c.rel is relative to the root
	if msg := atRoot.gitWriteRefused(filepath.FromSlash(c.rel), abs, c.shown); msg != "" {
		return errors.New(msg)
	}
	return nil
}
