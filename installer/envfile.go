package installer

import (
	"bufio"
	"fmt"
	"os"
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
