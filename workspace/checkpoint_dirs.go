package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// MakeDir puts back the directory rel (relative to the root) that the
// undone turn removed, with mode: it is made when absent (its parent must
// be there: the undo makes the shallowest first), and a directory there
// already only gets mode (an undo a kill cut short, finished; or a turn
// that changed its mode alone). Something else than a directory at rel is
// someone's since: a RestoreConflict, changing nothing.
func (r Restorer) MakeDir(rel string, mode fs.FileMode) error {
	root, name, err := r.dirName(rel)
	if err != nil {
		return err
	}
	fi, err := root.handle().Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := root.handle().Mkdir(name, mode); err != nil {
			return fmt.Errorf("make the directory %q: %w", rel, err)
		}
	case err != nil:
		return fmt.Errorf("look at %q: %w", rel, err)
	case !fi.IsDir():
		return RestoreConflict{}
	}
	// Mkdir's mode went through the umask, and one there may differ.
	if err := root.handle().Chmod(name, mode); err != nil {
		return fmt.Errorf("restore the mode of %q: %w", rel, err)
	}
	return nil
}

// RemoveDir removes the directory rel (relative to the root) that the
// undone turn made, once the files the turn put in it are gone: the undo
// removes the deepest first. One that holds anything is someone's work
// since, left as it is: a RestoreConflict. One gone already is nil.
func (r Restorer) RemoveDir(rel string) error {
	root, name, err := r.dirName(rel)
	if err != nil {
		return err
	}
	fi, err := root.handle().Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("look at %q: %w", rel, err)
	case !fi.IsDir():
		return RestoreConflict{}
	}
	d, err := root.handle().Open(name)
	if err != nil {
		return fmt.Errorf("open the directory %q: %w", rel, err)
	}
	names, _ := d.Readdirnames(1)
	d.Close()
	if len(names) > 0 {
		return RestoreConflict{}
	}
	if err := root.handle().Remove(name); err != nil {
		return fmt.Errorf("remove the directory %q: %w", rel, err)
	}
	return nil
}

// dirName resolves rel, a directory's path relative to the root, to the
// root's handle name for it, refusing one under .git as the file tools do.
func (r Restorer) dirName(rel string) (*Root, string, error) {
	root := r.Tools.at.root
	if sandbox.HasGitComponent(filepath.FromSlash(rel)) {
		return nil, "", fmt.Errorf("%q lies in a .git directory", rel)
	}
	_, name, err := root.resolveName(filepath.FromSlash(rel))
	if err != nil {
		return nil, "", err
	}
	return root, name, nil
}
