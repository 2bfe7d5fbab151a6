package workspace

import "strings"

// secretWords mark an environment variable as a credential wherever they
// appear in its name, compared case-insensitively.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "SESSION"}

// secretPrefixes mark whole families of variables as off limits: API
// clients' configuration and hearth's own.
var secretPrefixes = []string{"OPENAI_", "ANTHROPIC_", "AWS_", "HEARTH_"}

// secretNames are dropped by exact name (already covered by the words; kept
// so the list says what matters most).
var secretNames = []string{"GITHUB_TOKEN", "GH_TOKEN"}

// scrubEnv returns environ (entries "NAME=value", as from os.Environ) without
// the variables that may hold credentials, so a command the model runs
// cannot read the user's API keys or tokens. Everything else (PATH, HOME,
// LANG, TERM, ...) is kept in order. Entries without "=" are dropped;
// Windows' per-drive entries ("=C:=C:\x") are kept.
func scrubEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if name == "" { // "=C:=C:\x": the name is "=C:"
			out = append(out, kv)
			continue
		}
		if isSecretName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// isSecretName reports whether an environment variable called name may hold
// a credential.
func isSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	for _, n := range secretNames {
		if upper == n {
			return true
		}
	}
	return false
}
