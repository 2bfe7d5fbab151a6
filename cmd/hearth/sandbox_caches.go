package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A sandboxed command may write the user's build caches, so that the
// model's `go test`, `cargo build`, `npm ci` or `pip install` works as the
// user's own would. Only the caches themselves: never a directory of
// executables (~/go/bin, where `go install` puts hearth; ~/.cargo/bin;
// ~/.local/bin; npx's ~/.npm/_npx), a file a shell sources (~/.cargo/env),
// another program's cache of code it runs (~/.cache/pre-commit), or the
// directory of the running hearth binary: a command that could write
// those would run as the user the next time they open a shell or run a
// tool, outside any sandbox.

// cacheDirs are the directories commands may write besides the workspace
// and the temp dir (sandbox.Config.Write): Go's build and module caches,
// cargo's registry and git checkouts, npm's cache and logs, and pip's
// cache, wherever the environment puts them. Missing ones are skipped by
// the sandbox's rules. A directory holding the running binary is left out.
func cacheDirs() []string {
	var dirs []string
	add := func(d string) {
		if filepath.IsAbs(d) {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	goenv := goEnv()
	add(goenv["GOCACHE"])
	add(goenv["GOMODCACHE"])
	home, _ := os.UserHomeDir()
	cargo := os.Getenv("CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	if cargo != "" {
		add(filepath.Join(cargo, "registry"))
		add(filepath.Join(cargo, "git"))
	}
	npm := firstEnv("npm_config_cache", "NPM_CONFIG_CACHE")
	if npm == "" && home != "" {
		npm = filepath.Join(home, ".npm")
	}
	if npm != "" {
		add(filepath.Join(npm, "_cacache"))
		add(filepath.Join(npm, "_logs"))
	}
	if pip := os.Getenv("PIP_CACHE_DIR"); pip != "" {
		add(pip)
	} else if c, err := os.UserCacheDir(); err == nil {
		add(filepath.Join(c, "pip"))
	}
	return withoutExeDir(dirs)
}

// firstEnv is the value of the first of names that is set and not empty.
func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// goEnv computes GOCACHE and GOMODCACHE as `go env` would, without running
// go at start-up: the environment, else the go env file (`go env -w`,
// $GOENV or os.UserConfigDir()/go/env), else the defaults:
// os.UserCacheDir()/go-build, and the first GOPATH entry's pkg/mod (GOPATH
// defaulting to ~/go). GOCACHE=off yields no GOCACHE.
func goEnv() map[string]string {
	file := goEnvFile()
	get := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return file[k]
	}
	env := map[string]string{}
	switch c := get("GOCACHE"); {
	case c == "off":
	case c != "":
		env["GOCACHE"] = c
	default:
		if d, err := os.UserCacheDir(); err == nil {
			env["GOCACHE"] = filepath.Join(d, "go-build")
		}
	}
	if m := get("GOMODCACHE"); m != "" {
		env["GOMODCACHE"] = m
		return env
	}
	gopath := get("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	if list := filepath.SplitList(gopath); len(list) > 0 && list[0] != "" {
		env["GOMODCACHE"] = filepath.Join(list[0], "pkg", "mod")
	}
	return env
}

// goEnvFile reads the go env file's KEY=VALUE lines; nil when there is none.
func goEnvFile() map[string]string {
	path := os.Getenv("GOENV")
	if path == "off" {
		return nil
	}
	if path == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return nil
		}
		path = filepath.Join(d, "go", "env")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			vars[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return vars
}

// withoutExeDir drops every directory that is, or holds, a directory of
// programs — the running binary's, ~/go/bin, GOBIN, ~/.cargo/bin,
// ~/.local/bin — or the home directory (its dotfiles are sourced by the
// shell), symlinks evaluated: a cache variable pointed at one of them must
// not let a command replace hearth or what the user's shell runs.
func withoutExeDir(dirs []string) []string {
	var avoid []string
	if exe, err := os.Executable(); err == nil {
		avoid = append(avoid, filepath.Dir(exe))
	}
	if home, err := os.UserHomeDir(); err == nil {
		avoid = append(avoid, home, filepath.Join(home, "go", "bin"), filepath.Join(home, ".cargo", "bin"), filepath.Join(home, ".local", "bin"))
	}
	if gobin := os.Getenv("GOBIN"); filepath.IsAbs(gobin) {
		avoid = append(avoid, gobin)
	}
	if cargo := os.Getenv("CARGO_HOME"); filepath.IsAbs(cargo) {
		avoid = append(avoid, filepath.Join(cargo, "bin"), filepath.Join(cargo, "env"))
	}
	for i, a := range avoid {
		avoid[i] = canonicalPath(a)
	}
	kept := dirs[:0]
	for _, d := range dirs {
		real := canonicalPath(d)
		if !slices.ContainsFunc(avoid, func(a string) bool { return holds(real, a) || holds(d, a) }) {
			kept = append(kept, d)
		}
	}
	return kept
}

// canonicalPath is p, clean, with symlinks evaluated where it exists.
func canonicalPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// holds reports whether dir is p or an ancestor of it; both clean and
// absolute.
func holds(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
