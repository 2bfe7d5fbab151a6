package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/responses"
)

// keyCheckTimeout bounds the one request that checks a key.
const keyCheckTimeout = 20 * time.Second

// runLogin is `hearth login`: it reads an OpenAI API key (hidden, on a
// terminal; else the first line of stdin), checks it with one request that
// spends no tokens (GET {base}/models), stores it in the env file the daemon
// reads (0600), and has a running daemon read it again (ACP authenticate).
// Editors offer it as their login (an ACP terminal auth method).
func runLogin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := newFlags("login", stderr).Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	key, err := readKey(ctx, os.Stdin, stderr)
	if err != nil {
		return err
	}
	base := shellConfig(cfg).BaseURL
	if base == "" {
		base = responses.DefaultBaseURL
	}
	if err := checkKey(ctx, base, key); err != nil {
		return err
	}
	path, err := envFilePath()
	if err == nil {
		err = installer.SetEnvVar(path, "OPENAI_API_KEY", key)
	}
	if err != nil {
		return fmt.Errorf("storing the key: %w", err)
	}
	fmt.Fprintf(stdout, "The key works (%s answered); stored in %s.\n", rpc.RedactURL(base), path)
	st, err := tellDaemon(ctx, cfg, rpc.MethodAuthenticate, acp.AuthenticateRequest{MethodId: "login"})
	switch {
	case errors.Is(err, errNoDaemon):
		fmt.Fprintln(stdout, "The daemon uses it when it starts.")
	case err != nil:
		return fmt.Errorf("the running daemon could not take the key: %w", err)
	case st.APIKey != rpc.MaskSecret(key):
		fmt.Fprintf(stdout, "The running daemon (pid %d) was started with another OPENAI_API_KEY in its environment, which wins "+
			"over the stored one: `hearth stop` it (or `hearth restart` the service) to use the new key.\n", st.PID)
	default:
		fmt.Fprintf(stdout, "The running daemon (pid %d) uses it now.\n", st.PID)
	}
	return nil
}

// runLogout is `hearth logout`: the key `hearth login` stored is removed
// from the env file, and a running daemon goes on without it (ACP logout).
func runLogout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := newFlags("logout", stderr).Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	path, err := envFilePath()
	if err != nil {
		return err
	}
	removed, err := installer.UnsetEnvVar(path, "OPENAI_API_KEY")
	if err != nil {
		return fmt.Errorf("removing the key: %w", err)
	}
	if removed {
		fmt.Fprintf(stdout, "Removed the key from %s.\n", path)
	} else {
		fmt.Fprintf(stdout, "No key is stored in %s.\n", path)
	}
	st, err := tellDaemon(ctx, cfg, rpc.MethodLogout, acp.LogoutRequest{})
	switch {
	case errors.Is(err, errNoDaemon):
	case err != nil:
		return fmt.Errorf("the running daemon: %w", err)
	case st.APIKey != rpc.MaskSecret(""):
		fmt.Fprintf(stdout, "The running daemon (pid %d) still has a key from its own environment: `hearth stop` it.\n", st.PID)
	case st.Simulator:
		fmt.Fprintf(stdout, "The running daemon (pid %d) answers with the built-in simulator now.\n", st.PID)
	default:
		fmt.Fprintf(stdout, "The running daemon (pid %d) has no API key now.\n", st.PID)
	}
	if os.Getenv("OPENAI_API_KEY") != "" {
		fmt.Fprintln(stdout, "OPENAI_API_KEY is still set in this shell: a daemon started from it uses that key.")
	}
	return nil
}

// readKey reads the key: typed on the terminal without echo, or the first
// line of stdin when it is not a terminal (hearth login < keyfile). Ctrl-C
// while typing restores the terminal and cancels.
func readKey(ctx context.Context, stdin *os.File, stderr io.Writer) (string, error) {
	var line string
	if isTerminal(stdin) {
		restore, err := noEcho(stdin) // before the question: nothing typed after it is shown
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "OpenAI API key (typing is not shown): ")
		got := make(chan string, 1)
		go func() { // ends with the process when cancelled
			l, _ := bufio.NewReader(stdin).ReadString('\n')
			got <- l
		}()
		select {
		case line = <-got:
		case <-ctx.Done():
		}
		restore()
		fmt.Fprintln(stderr)
		if ctx.Err() != nil {
			return "", &exitError{exitAskCancelled, errors.New("cancelled: nothing was stored")}
		}
	} else {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<10))
		if err != nil {
			return "", fmt.Errorf("reading the key from stdin: %w", err)
		}
		for l := range strings.Lines(string(b)) {
			if line = strings.TrimSpace(l); line != "" {
				break
			}
		}
	}
	key := strings.TrimSpace(line)
	switch {
	case key == "":
		return "", &exitError{2, errors.New("no key given: type it when asked, or pipe it: hearth login < keyfile")}
	case strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == '#' || r == 0x7f }):
		return "", &exitError{2, errors.New("that is not an API key: it holds spaces, quotes, # or control characters")}
	}
	return key, nil
}

// checkKey asks base for its model list with key: what any key may do, at
// no cost. 401 and 403 are a refused key; anything else that is not 200 is
// a failure to check. Nothing is stored unless it answers 200.
func checkKey(ctx context.Context, base, key string) error {
	shown := rpc.RedactURL(base)
	ctx, cancel := context.WithTimeout(ctx, keyCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/models", nil)
	if err != nil {
		return fmt.Errorf("OPENAI_BASE_URL=%q: %w", shown, err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error // names the URL, which the message names already
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("cannot reach %s to check the key (%s); nothing was stored", shown, rpc.RedactURLs(err.Error()))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	why := ""
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		why = ": " + visibleLine(e.Error.Message)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s refused the key (HTTP %d%s); nothing was stored", shown, resp.StatusCode, why)
	default:
		return fmt.Errorf("%s answered HTTP %d to the key check%s; nothing was stored", shown, resp.StatusCode, why)
	}
}

// errNoDaemon: no daemon answers on the socket (tellDaemon starts none).
var errNoDaemon = errors.New("no daemon")

// tellDaemon calls method on the running daemon, if one answers, and
// returns its status after the call.
func tellDaemon(ctx context.Context, cfg daemon.Config, method string, params any) (rpc.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, err := connect(ctx, cfg)
	var ee *exitError
	if errors.As(err, &ee) {
		return rpc.Status{}, errNoDaemon
	}
	if err != nil {
		return rpc.Status{}, err
	}
	defer client.Close()
	if err := client.Call(ctx, method, params, nil); err != nil {
		return rpc.Status{}, err
	}
	var st rpc.Status
	err = client.Call(ctx, rpc.MethodHearthStatus, nil, &st)
	return st, err
}
