package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearthd/hearth/rpc"
)

// A session opened in a directory works in the repository that holds it:
// the workspace (the tools' confinement, the watcher, the Responses client
// its sessions share) is the git root containing the directory, and the
// directory is the session's working directory (its cwd: where the model's
// relative paths start and its commands run). A session opened in sub/dir
// of a repository can read ../../README.md, the root's AGENTS.md and the
// tests beside it, as a person working there would.
//
// A repository root that may not be a workspace (refusedWorkspace: a
// dotfiles repository at $HOME, one holding hearth's data directory) is not
// opened whole: the workspace is the cwd, as it is outside any repository.

// repoRoot returns the nearest directory, dir itself or an ancestor, that
// holds a .git entry — a directory, or a file as in a worktree or a
// submodule — or "" when there is none up to the filesystem root. dir is
// absolute, with symlinks evaluated.
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// workspaceRoot is the workspace root of a session opened in cwd (absolute,
// symlinks evaluated): the repository root containing it when that may be a
// workspace, else cwd. why says why a repository root was passed over.
func workspaceRoot(cwd string, cfg Config) (root, why string) {
	repo := repoRoot(cwd)
	if repo == "" || repo == cwd {
		return cwd, ""
	}
	if r := refusedWorkspace(repo, cfg); r != "" {
		return cwd, fmt.Sprintf("the repository at %s is not opened whole: %s", repo, r)
	}
	return repo, ""
}

// workspaceForCwd returns the open workspace of a session opened in dir
// (session/new's cwd), opening it on first use, and the session's working
// directory: dir with its symlinks evaluated.
func (d *Daemon) workspaceForCwd(ctx context.Context, dir string) (*openWorkspace, string, error) {
	cwd, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err == nil {
		var info os.FileInfo
		if info, err = os.Stat(cwd); err == nil && !info.IsDir() {
			err = fmt.Errorf("%s is not a directory", dir)
		}
	}
	if err != nil {
		return nil, "", rpc.InvalidParams("cwd", "%s", cwdAdvice(dir, err))
	}
	root, why := workspaceRoot(cwd, d.Config())
	if why != "" {
		d.log.Info("workspace is the session's directory", "cwd", cwd, "why", why)
	}
	w, err := d.workspaceFor(ctx, root)
	if err != nil {
		return nil, "", err
	}
	return w, cwd, nil
}

// sessionDir is a session's working directory in the workspace at root:
// cwd as stored (absolute; "" for the root), and the same relative to root
// ("" for the root itself). A cwd outside root (a row from elsewhere) is
// the root.
func sessionDir(root, cwd string) (abs, rel string) {
	if cwd == "" {
		return root, ""
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return root, ""
	}
	if rel == "." {
		rel = ""
	}
	return cwd, rel
}
