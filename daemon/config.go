package daemon

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
)

// Config is what a daemon runs with, read from the environment by
// FromEnv. It is copied into the Daemon at New and never changed there.
type Config struct {
	Socket  string // unix socket path ($HEARTH_SOCKET)
	DataDir string // database directory ($HEARTH_DATA_DIR)
	// NoSocket is set by the CLI for a daemon that serves no socket: the
	// command it runs for ("hearth serve --stdio", "hearth ask --no-daemon"),
	// which the data directory's lock names instead of Socket.
	NoSocket string

	BaseURL string // Responses API base ($OPENAI_BASE_URL); in simulator mode the simulator's
	APIKey  string // $OPENAI_API_KEY; never logged, stored or shown unmasked
	Model   string // $HEARTH_MODEL

	// Simulator is simulator mode: FromEnv sets it when neither an API key
	// nor OPENAI_BASE_URL is set, and leaves BaseURL empty. The caller then
	// runs the built-in Responses simulator (session/sim), puts its URL in
	// BaseURL before New or Reload, and closes it after Close; the daemon
	// only reports the mode (status, probe, logs).
	Simulator bool
	// NoSimulator ($HEARTH_SIMULATOR=off): a key is wanted. Without one the
	// daemon does not fall back to the simulator; sessions are refused
	// with ACP's auth_required until a key is stored (LoginNeeded).
	NoSimulator bool
	// Credentials is where the API key is kept between runs (hearth serve:
	// the env file), for ACP's authenticate and logout; nil: authenticate
	// looks at APIKey only, and logout is not offered. Kept across Reload.
	Credentials Credentials

	// Lanes ($HEARTH_LANES: auto, on, off) puts each session of a
	// workspace on its own stream_id lane of one WebSocket; auto switches
	// an endpoint to one WebSocket per session when it has no lanes.
	Lanes responses.LaneMode

	// Reasoning ($HEARTH_REASONING_EFFORT, $HEARTH_REASONING_SUMMARY):
	// "none" leaves the field out.
	ReasoningEffort  string
	ReasoningSummary string
	Keepalive        time.Duration // $HEARTH_KEEPALIVE: ping a quiet WebSocket this often; 0 = default, "off" = never

	WarmupTimeout     time.Duration // $HEARTH_WARMUP_TIMEOUT: total deadline of a warm-up, shared with the first turn
	FirstEventTimeout time.Duration // $HEARTH_FIRST_EVENT_TIMEOUT: request sent → first event
	IdleTimeout       time.Duration // $HEARTH_IDLE_TIMEOUT: silence within a response (only its own events count)
	MaxConnAge        time.Duration // $HEARTH_MAX_CONN_AGE: rotate a WebSocket between requests after this
	SessionIdle       time.Duration // $HEARTH_SESSION_IDLE: close a session with no editor and no turn after this (default 30m)
	WorkspaceIdle     time.Duration // $HEARTH_WORKSPACE_IDLE: close a workspace with no open session after this (default 5m)
	ContextWindow     int           // $HEARTH_CONTEXT_WINDOW: the model's input window in tokens; 0 = known default of the model family
	ToolOutputTokens  int           // $HEARTH_TOOL_OUTPUT_TOKENS: what one tool's output may take in the model's view; 0 = the profile's
	Compaction        string        // $HEARTH_COMPACTION: local (a summary the model writes) or server (the API's compaction); "" = local
	MCPCallTimeout    time.Duration // $HEARTH_MCP_TIMEOUT: one call of an MCP server's tool; 0 = default 60s
	NoSpare           bool          // $HEARTH_SPARE=off: no session warmed ahead of time per workspace
	WatchMaxDirs      int           // $HEARTH_WATCH_MAX_DIRS: a workspace with more directories (outside ignored ones) is watched in part; 0 = default 20000, -1 = no limit
	ShellNetwork      string        // $HEARTH_SHELL_NETWORK: on, off or mode (by the session's mode, modeNetwork); "" = mode
	WebSearch         string        // $HEARTH_WEB_SEARCH: cached, live or off (web_search.go); "" = cached
	CheckpointBytes   int64         // $HEARTH_CHECKPOINT_SIZE: the pre-images a workspace's checkpoints keep, at most; 0 = default 512 MiB
	CheckpointTurns   int           // $HEARTH_CHECKPOINT_TURNS: the checkpointed turns a workspace keeps, at most; 0 = default 1000
	Version           string
}

// FromEnv reads the configuration from the environment, with the defaults
// docs/USAGE.md documents.
func FromEnv() (Config, error) {
	c := Config{
		Socket:  os.Getenv("HEARTH_SOCKET"),
		DataDir: os.Getenv("HEARTH_DATA_DIR"),
		BaseURL: strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")),
		APIKey:  strings.TrimSpace(os.Getenv("OPENAI_API_KEY")),
		Model:   os.Getenv("HEARTH_MODEL"),

		ReasoningEffort:  strings.TrimSpace(os.Getenv("HEARTH_REASONING_EFFORT")),
		ReasoningSummary: strings.TrimSpace(os.Getenv("HEARTH_REASONING_SUMMARY")),
	}
	if err := c.modelFromEnv(); err != nil {
		return c, err
	}
	var err error
	switch v := strings.TrimSpace(os.Getenv("HEARTH_SIMULATOR")); v {
	case "", "on":
	case "off":
		c.NoSimulator = true
	default:
		return c, fmt.Errorf("HEARTH_SIMULATOR=%q: want on (the simulator answers when no API key is set) or off", v)
	}
	switch v := strings.TrimSpace(os.Getenv("HEARTH_SPARE")); v {
	case "", "on":
	case "off":
		c.NoSpare = true
	default:
		return c, fmt.Errorf("HEARTH_SPARE=%q: want on or off", v)
	}
	if c.ShellNetwork, err = parseShellNetwork(os.Getenv("HEARTH_SHELL_NETWORK")); err != nil {
		return c, err
	}
	if c.WebSearch, err = parseWebSearch(os.Getenv("HEARTH_WEB_SEARCH")); err != nil {
		return c, err
	}
	if err := c.checkpointsFromEnv(); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(os.Getenv("HEARTH_WATCH_MAX_DIRS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 || n == 0 {
			return c, fmt.Errorf("HEARTH_WATCH_MAX_DIRS=%q: want a positive number of directories, or -1 for no limit", v)
		}
		c.WatchMaxDirs = n
	}
	if c.Socket == "" {
		c.Socket = DefaultSocketPath()
	}
	if c.DataDir == "" {
		d, err := defaultDataDir()
		if err != nil {
			return c, err
		}
		c.DataDir = d
	}
	if c.APIKey == "" && c.BaseURL == "" {
		c.Simulator = !c.NoSimulator
	}
	return c, c.durationsFromEnv()
}

// modelFromEnv reads how the daemon talks to the model API: lanes,
// reasoning, keepalive and the context window.
func (c *Config) modelFromEnv() error {
	var err error
	if c.Lanes, err = responses.ParseLaneMode(os.Getenv("HEARTH_LANES")); err != nil {
		return err
	}
	if c.ReasoningEffort != "" && !slices.Contains(session.ReasoningEfforts, c.ReasoningEffort) {
		return fmt.Errorf("HEARTH_REASONING_EFFORT=%q: want one of %s", c.ReasoningEffort, strings.Join(session.ReasoningEfforts, ", "))
	}
	if c.ReasoningSummary != "" && !slices.Contains(session.ReasoningSummaries, c.ReasoningSummary) {
		return fmt.Errorf("HEARTH_REASONING_SUMMARY=%q: want one of %s", c.ReasoningSummary, strings.Join(session.ReasoningSummaries, ", "))
	}
	if v := strings.TrimSpace(os.Getenv("HEARTH_KEEPALIVE")); v == "off" {
		c.Keepalive = -1
	} else if v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("HEARTH_KEEPALIVE=%q: want a positive duration such as 30s, or off", v)
		}
		c.Keepalive = d
	}
	if v := strings.TrimSpace(os.Getenv("HEARTH_CONTEXT_WINDOW")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			return fmt.Errorf("HEARTH_CONTEXT_WINDOW=%q: want the model's input window in tokens (at least 1000)", v)
		}
		c.ContextWindow = n
	}
	if v := strings.TrimSpace(os.Getenv("HEARTH_TOOL_OUTPUT_TOKENS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			return fmt.Errorf("HEARTH_TOOL_OUTPUT_TOKENS=%q: want the tokens one tool's output may take (at least 100)", v)
		}
		c.ToolOutputTokens = n
	}
	switch v := strings.TrimSpace(os.Getenv("HEARTH_COMPACTION")); v {
	case "", session.CompactLocal, session.CompactServer:
		c.Compaction = v
	default:
		return fmt.Errorf("HEARTH_COMPACTION=%q: want local (a summary the model writes) or server (the API's own compaction)", v)
	}
	return nil
}

// durationsFromEnv reads the timeouts and idle times.
func (c *Config) durationsFromEnv() error {
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{
		{"HEARTH_WARMUP_TIMEOUT", &c.WarmupTimeout},
		{"HEARTH_FIRST_EVENT_TIMEOUT", &c.FirstEventTimeout},
		{"HEARTH_IDLE_TIMEOUT", &c.IdleTimeout},
		{"HEARTH_MAX_CONN_AGE", &c.MaxConnAge},
		{"HEARTH_SESSION_IDLE", &c.SessionIdle},
		{"HEARTH_WORKSPACE_IDLE", &c.WorkspaceIdle},
		{"HEARTH_MCP_TIMEOUT", &c.MCPCallTimeout},
	} {
		v := os.Getenv(d.env)
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 90s or 5m", d.env, v)
		}
		*d.dst = dur
	}
	return nil
}

// Check reports a configuration the daemon cannot run with, naming the
// variable and the fix: New and Reload refuse it, and `hearth ask` says so
// before it starts anything. FromEnv does not, so that `hearth stop` and
// `status` still work while OPENAI_BASE_URL is wrong in the shell.
func (c Config) Check() error {
	if c.BaseURL == "" {
		return nil
	}
	shown := rpc.RedactURL(c.BaseURL)
	const want = "want the API's http(s) base URL, such as https://api.openai.com/v1, or unset it to use OpenAI's"
	u, err := url.Parse(c.BaseURL)
	switch {
	case err != nil:
		return fmt.Errorf("OPENAI_BASE_URL=%q is not a URL: %s", shown, want)
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return fmt.Errorf("OPENAI_BASE_URL=%q has no scheme: %s", shown, want)
		}
		return fmt.Errorf("OPENAI_BASE_URL=%q: hearth speaks http and https, not %s: %s", shown, u.Scheme, want)
	case u.Host == "":
		return fmt.Errorf("OPENAI_BASE_URL=%q has no host: %s", shown, want)
	}
	return nil
}

// checkRunnable is Check, and in simulator mode that the caller has put the
// simulator's URL in BaseURL: New and Reload refuse anything else.
func (c Config) checkRunnable() error {
	if c.Simulator && c.BaseURL == "" {
		return errors.New("simulator mode without the simulator's base URL: the caller starts the simulator and sets BaseURL")
	}
	return c.Check()
}

// DefaultSocketPath is $XDG_RUNTIME_DIR/hearth/hearth.sock, else
// /tmp/hearth-$UID/hearth.sock.
func DefaultSocketPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "hearth", "hearth.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("hearth-%d", os.Getuid()), "hearth.sock")
}

func defaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "hearth"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no HEARTH_DATA_DIR, XDG_DATA_HOME or home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "hearth"), nil
}

// DBPath is the database file inside the data directory.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "hearth.db") }
