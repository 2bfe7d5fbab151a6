package main

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
)

// envCredentials is hearth serve's daemon.Credentials: the API key lives in
// the env file (~/.config/hearth/env), which `hearth login` writes. Reload
// is SIGHUP's reload (the env file and the environment read again, the
// built-in simulator started for a configuration in simulator mode), also
// run by ACP's authenticate; Forget removes the key's line first (logout).
// One per serve, living as long as its daemon; calls are serialised, since
// reload changes the process environment and the simulator.
type envCredentials struct {
	mu     sync.Mutex
	reload func() (daemon.Config, error) // the configuration to reload into
	d      *daemon.Daemon                // set once New returned, before serving
}

func (c *envCredentials) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	next, err := c.reload()
	if err != nil {
		return err
	}
	return c.d.Reload(next)
}

func (c *envCredentials) Forget() error {
	c.mu.Lock()
	path, err := envFilePath()
	if err == nil {
		_, err = installer.UnsetEnvVar(path, "OPENAI_API_KEY")
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.Reload()
}

// envFilePath is the env file of this user: ~/.config/hearth/env.
func envFilePath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return installer.Spec{Home: home}.EnvFile(), nil
}

// envFileKey is the OPENAI_API_KEY the env file holds, "" for none.
func envFileKey() string {
	path, err := envFilePath()
	if err != nil {
		return ""
	}
	vars, err := installer.LoadEnvFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return vars["OPENAI_API_KEY"]
}
