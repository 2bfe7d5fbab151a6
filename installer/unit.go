package installer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Name is the service's name: hearth.service for systemd, the label and
// hearth.plist for launchd.
const Name = "hearth"

// Spec is everything a service file is generated from. It is a plain value:
// the generators below are pure functions of it, so tests render them with a
// fixed binary path and home directory and no systemd or launchd present.
type Spec struct {
	Binary  string // absolute path of the hearth binary
	Home    string // the user's home directory
	Socket  string // HEARTH_SOCKET the service runs with
	DataDir string // HEARTH_DATA_DIR the service runs with
	// ConfigHome is $XDG_CONFIG_HOME, where systemd looks for user units;
	// "" means Home/.config, its default.
	ConfigHome string
}

// ConfigHome is the user's configuration directory as systemd and the XDG
// base directory spec resolve it: $XDG_CONFIG_HOME when it is set to an
// absolute path (a relative one is invalid and ignored), else "" (the
// default, Home/.config).
func ConfigHome() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return ""
}

// EnvFile is ~/.config/hearth/env: the 0600 file secrets such as
// OPENAI_API_KEY live in. systemd reads it (EnvironmentFile=); launchd has
// no such thing, so `hearth serve` reads it itself (LoadEnvFile).
func (s Spec) EnvFile() string { return filepath.Join(s.Home, ".config", "hearth", "env") }

// SystemdUnitPath is where the systemd user unit goes: the first directory
// of systemd's user unit search path, $XDG_CONFIG_HOME/systemd/user
// (~/.config/systemd/user by default). kardianos/service only ever uses the
// default, which is why hearth writes and removes the unit itself.
func (s Spec) SystemdUnitPath() string {
	cfg := s.ConfigHome
	if cfg == "" {
		cfg = filepath.Join(s.Home, ".config")
	}
	return filepath.Join(cfg, "systemd", "user", Name+".service")
}

// LaunchdPlistPath is where the launchd agent goes, the path kardianos/service
// loads and unloads.
func (s Spec) LaunchdPlistPath() string {
	return filepath.Join(s.Home, "Library", "LaunchAgents", Name+".plist")
}

func (s Spec) env() map[string]string {
	return map[string]string{"HEARTH_SOCKET": s.Socket, "HEARTH_DATA_DIR": s.DataDir}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SystemdUnit renders the systemd user unit. It holds no secret: the API key
// comes from the optional EnvironmentFile (the leading "-"), never from the
// unit, which is world-readable.
//
// The text contains no "{{", so handed to kardianos/service as its
// SystemdScript it renders to itself.
func SystemdUnit(s Spec) string {
	var b strings.Builder
	b.WriteString("# Written by `hearth install`; `hearth uninstall` removes it.\n")
	b.WriteString("# Put OPENAI_API_KEY and other secrets in ~/.config/hearth/env (mode 0600), not here.\n")
	b.WriteString("[Unit]\n")
	b.WriteString("Description=hearth, a per-user agent daemon for editors\n")
	b.WriteString("Documentation=https://github.com/hearthd/hearth\n\n")
	b.WriteString("[Service]\n")
	b.WriteString("Type=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s serve\n", systemdWord(s.Binary))
	b.WriteString("Environment=")
	for i, k := range sortedKeys(s.env()) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(systemdWord(k + "=" + s.env()[k]))
	}
	b.WriteString("\n")
	b.WriteString("EnvironmentFile=-%h/.config/hearth/env\n")
	b.WriteString("Restart=on-failure\n")
	b.WriteString("RestartSec=2\n\n")
	b.WriteString("[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return b.String()
}

// systemdWord quotes one word of a unit setting: specifiers (%) and variable
// expansion ($) are escaped, and the word is double-quoted when it holds
// whitespace, quotes or backslashes.
func systemdWord(w string) string {
	w = strings.ReplaceAll(w, "%", "%%")
	w = strings.ReplaceAll(w, "$", "$$")
	if !strings.ContainsAny(w, " \t\"'\\;") && w != "" {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(w) + `"`
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

// LaunchdPlist renders the launchd agent. launchd has no EnvironmentFile:
// `hearth serve` loads ~/.config/hearth/env itself, so the plist carries only
// the socket and data directory, never a key. KeepAlive restarts the daemon
// when it exits with an error (as Restart=on-failure), ThrottleInterval
// spaces restarts 2 s apart (as RestartSec=2).
func LaunchdPlist(s Spec) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by hearth install; hearth uninstall removes it. Secrets go in ~/.config/hearth/env, read by hearth serve. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + Name + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + xmlEscaper.Replace(s.Binary) + `</string>
		<string>serve</string>
	</array>
	<key>EnvironmentVariables</key>
	<dict>
`)
	for _, k := range sortedKeys(s.env()) {
		fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", k, xmlEscaper.Replace(s.env()[k]))
	}
	b.WriteString(`	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ThrottleInterval</key>
	<integer>2</integer>
	<key>StandardErrorPath</key>
	<string>` + xmlEscaper.Replace(filepath.Join(s.DataDir, "launchd.log")) + `</string>
</dict>
</plist>
`)
	return b.String()
}

// EnvTemplate is what install writes to a missing env file.
const EnvTemplate = `# hearth's environment, read by the hearth service (systemd EnvironmentFile=,
# and by ` + "`hearth serve`" + ` itself, which is how launchd gets it).
# Keep this file mode 0600. One KEY=value per line; # starts a comment.
# hearth install creates it when missing and hearth uninstall leaves it in place.
#
# OPENAI_API_KEY=sk-...
# OPENAI_BASE_URL=https://api.openai.com/v1
# HEARTH_MODEL=
`
