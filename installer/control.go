package installer

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/kardianos/service"
)

// probeTimeout bounds every call into the service manager: `systemctl
// --user` without a user bus fails, but a wedged manager must not hang the
// CLI either.
const probeTimeout = 10 * time.Second

// Manager controls the installed service through kardianos/service
// (UserService) once Check has confirmed that a per-user service manager
// answers. kardianos picks SysV inside a container without systemd and runs
// its commands without a deadline; hearth never lets it get that far.
type Manager struct {
	plan Plan
	svc  service.Service
}

// program is the kardianos Interface; hearth never runs under kardianos's
// Run (the unit execs `hearth serve`), so it does nothing.
type program struct{}

func (program) Start(service.Service) error { return nil }
func (program) Stop(service.Service) error  { return nil }

// NewManager returns the Manager for the plan, after checking that the
// system's per-user service manager answers. The error says why not, and
// what to run instead.
func NewManager(ctx context.Context, p Plan) (*Manager, error) {
	if err := Check(ctx, p.GOOS); err != nil {
		return nil, err
	}
	svc, err := service.New(program{}, &service.Config{
		Name:        Name,
		DisplayName: Name,
		Description: "hearth, a per-user agent daemon for editors",
		Executable:  p.Spec.Binary,
		Arguments:   []string{"serve"},
		Option: service.KeyValue{
			"UserService":   true,
			"SystemdScript": p.Unit.Content, // pre-rendered: no {{ }}, so it renders to itself
		},
	})
	if err != nil {
		return nil, err
	}
	want := map[string]string{"linux": "linux-systemd", "darwin": "darwin-launchd"}[p.GOOS]
	if svc.Platform() != want {
		return nil, fmt.Errorf("the service manager here is %s, not %s; run `hearth serve` instead", svc.Platform(), want)
	}
	return &Manager{plan: p, svc: svc}, nil
}

// Check reports whether goos's per-user service manager is usable here:
// systemctl must exist and `systemctl --user` must reach a user manager
// (it does not in containers, over plain sudo, or without a login session),
// launchctl must exist on macOS.
func Check(ctx context.Context, goos string) error {
	switch goos {
	case "linux":
		if _, err := exec.LookPath("systemctl"); err != nil {
			return errors.New("systemctl not found: this system does not run systemd; run `hearth serve` instead")
		}
		if _, err := Systemctl(ctx, "show-environment"); err != nil {
			return fmt.Errorf("no systemd user manager answers (%v); run `hearth serve` instead, or log in through a session that starts `systemd --user`", err)
		}
		return nil
	case "darwin":
		if _, err := exec.LookPath("launchctl"); err != nil {
			return errors.New("launchctl not found; run `hearth serve` instead")
		}
		return nil
	}
	return fmt.Errorf("%s: %w", goos, ErrUnsupported)
}

// Systemctl runs `systemctl --user ARGS...` with a deadline and returns its
// output; a failure carries systemctl's own message.
func Systemctl(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", append([]string{"--user"}, args...)...).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if ctx.Err() != nil {
		return msg, fmt.Errorf("systemctl --user %s: no answer within %s", strings.Join(args, " "), probeTimeout)
	}
	if err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return msg, fmt.Errorf("systemctl --user %s: %s", strings.Join(args, " "), msg)
	}
	return msg, nil
}

// Enable makes the manager pick up the unit and start it at login
// (systemd: daemon-reload + enable; launchd loads the agent at Start).
func (m *Manager) Enable(ctx context.Context) error {
	if m.plan.GOOS != "linux" {
		return nil
	}
	if _, err := Systemctl(ctx, "daemon-reload"); err != nil {
		return err
	}
	_, err := Systemctl(ctx, "enable", Name+".service")
	return err
}

// Disable stops the service and removes it from the login set; a service
// that is not installed or not running is not an error.
func (m *Manager) Disable(ctx context.Context) error {
	if m.plan.GOOS == "linux" {
		if _, err := Systemctl(ctx, "disable", "--now", Name+".service"); err != nil && !notLoaded(err) {
			return err
		}
		return nil
	}
	if err := m.Stop(ctx); err != nil && !notLoaded(err) {
		return err
	}
	return nil
}

// Reload tells systemd the unit file is gone (after Remove).
func (m *Manager) Reload(ctx context.Context) error {
	if m.plan.GOOS != "linux" {
		return nil
	}
	_, err := Systemctl(ctx, "daemon-reload")
	return err
}

func notLoaded(err error) bool {
	s := err.Error()
	return strings.Contains(s, "not loaded") || strings.Contains(s, "does not exist") || strings.Contains(s, "Could not find")
}

// Start, Stop and Restart go through kardianos/service, bounded by a deadline.
func (m *Manager) Start(ctx context.Context) error   { return bounded(ctx, "start", m.svc.Start) }
func (m *Manager) Stop(ctx context.Context) error    { return bounded(ctx, "stop", m.svc.Stop) }
func (m *Manager) Restart(ctx context.Context) error { return bounded(ctx, "restart", m.svc.Restart) }

// State is the service's state as the manager reports it: "running",
// "stopped" or "not installed".
func (m *Manager) State(ctx context.Context) (string, error) {
	var st service.Status
	err := bounded(ctx, "status", func() error {
		var err error
		st, err = m.svc.Status()
		return err
	})
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return "not installed", nil
	case err != nil:
		return "", err
	case st == service.StatusRunning:
		return "running", nil
	case st == service.StatusStopped:
		return "stopped", nil
	}
	return "unknown", nil
}

// bounded runs a kardianos call (which has no deadline of its own) and
// gives up waiting when the deadline passes. The call's goroutine is left
// to finish on its own: the CLI exits right after.
func bounded(ctx context.Context, what string, fn func() error) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: the service manager did not answer within %s", what, probeTimeout)
	}
}
