package installer

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadEnvFile reads an env file in the subset of systemd's EnvironmentFile
// syntax that both systemd and hearth understand: one KEY=value per line,
// blank lines and lines starting with # or ; ignored, whitespace around the
// key and value trimmed, and a value wrapped in matching single or double
// quotes unwrapped. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist); callers that treat it as optional check
// that. Values are returned as written: the caller decides whether the
// process environment wins (`hearth serve` should let it).
func LoadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("%s:%d: want KEY=value", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return env, nil
}

// SetEnvVar makes the env file at path hold key=value: the first line
// setting key is replaced, later ones removed, every other line kept as it
// is. A missing file is created from EnvTemplate (and its directory, 0700).
// The file is replaced atomically and left mode 0600, whatever it was: it
// holds secrets. value must fit on one line, without quotes or spaces.
func SetEnvVar(path, key, value string) error {
	if strings.ContainsAny(value, " \t\r\n\"'#") || value == "" {
		return fmt.Errorf("%s: the value of %s must be one word, without spaces, quotes or #", path, key)
	}
	return editEnvFile(path, key, key+"="+value)
}

// UnsetEnvVar removes every line setting key from the env file at path,
// keeping the rest; a missing file, or one without key, is left alone. It
// reports whether a line was removed.
func UnsetEnvVar(path, key string) (bool, error) {
	vars, err := LoadEnvFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, ok := vars[key]; !ok {
		return false, nil
	}
	return true, editEnvFile(path, key, "")
}

// editEnvFile rewrites the env file at path with the lines setting key
// replaced by line (removed when line is ""), written in place of the first.
func editEnvFile(path, key, line string) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = []byte(EnvTemplate)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	var b strings.Builder
	done := line == ""
	for l := range strings.Lines(string(old)) {
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok && strings.TrimSpace(k) == key {
			if !done {
				b.WriteString(line + "\n")
				done = true
			}
			continue
		}
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	if !done {
		b.WriteString(line + "\n")
	}
	return writeAtomic(path, b.String(), 0o600)
}
