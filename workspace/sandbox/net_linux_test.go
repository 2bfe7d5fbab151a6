package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() { netProbes["__no-userns"] = noUserns }

// noUserns runs the sandbox helper with args inside a user namespace that
// may make no user namespace of its own (its max_user_namespaces set to 0):
// a machine where they are refused, so the helper must fall back to
// Landlock alone.
func noUserns(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		return 126
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh", exe, sandboxSubcommand}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	var exit *exec.ExitError
	if err := cmd.Run(); errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		os.Stderr.WriteString("__no-userns: " + err.Error() + "\n")
		return 126
	}
	return 0
}

// lineListener listens on localhost over TCP and UDP (the same port
// number, when free on both) and reports, in order, the first line of each
// TCP connection and each datagram. Closed with the test.
func lineListener(t *testing.T) (tcpAddr, udpAddr string, lines <-chan string) {
	t.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	tcpDone, udpDone := acceptLines(l, "tcp ", ch), make(chan struct{})
	go func() {
		defer close(udpDone)
		buf := make([]byte, 512)
		for {
			n, _, err := u.ReadFrom(buf)
			if err != nil {
				return
			}
			ch <- "udp " + strings.TrimSpace(string(buf[:n]))
		}
	}()
	t.Cleanup(func() { l.Close(); u.Close(); <-tcpDone; <-udpDone })
	return l.Addr().String(), u.LocalAddr().String(), ch
}

// nextLine is what the listener got next.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("the listener got nothing within 10 s")
		return ""
	}
}

// probe sends the test's own line over TCP and over UDP and checks they are
// the next the listener gets: nothing a sandboxed command tried before came
// through. (Loopback delivers a datagram before sendto returns.)
func probe(t *testing.T, tcpAddr, udpAddr string, lines <-chan string) {
	t.Helper()
	for _, a := range []struct{ network, addr string }{{"tcp4", tcpAddr}, {"udp4", udpAddr}} {
		c, err := net.Dial(a.network, a.addr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Write([]byte("probe\n"))
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := nextLine(t, lines), a.network[:3]+" probe"; got != want {
			t.Errorf("the listener got %q before the test's own %q: a sandboxed command with the network off came through", got, want)
		}
	}
}

// netCase is one probe a sandboxed command runs, and the line the
// listener gets when it comes through.
type netCase struct{ name, command, line, failure string }

func netCases(t *testing.T, tcpAddr, udpAddr string) []netCase {
	return []netCase{
		{"tcp", probeCommand(t, "__dial", tcpAddr), "tcp sandboxed", "dial: "},
		{"mptcp", probeCommand(t, "__dial", tcpAddr, "mptcp"), "tcp sandboxed", "dial: "},
		{"udp", probeCommand(t, "__udp", udpAddr), "udp sandboxed", "udp: "},
		{"listen", probeCommand(t, "__listen"), "", "listen: "},
	}
}

// TestSandboxNetwork runs the real helper with the network on and off
// against TCP and UDP listeners the test holds. On, every probe gets
// through. Off: in an empty network namespace, where this machine has user
// namespaces, none does (TCP, Multipath TCP, UDP, listening); with Landlock
// alone (ABI 4+) TCP connect and bind are refused; with neither,
// NetworkStatus says the network cannot be restricted and it is indeed open.
// The model is told the network was off when a command fails.
func TestSandboxNetwork(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	tcpAddr, udpAddr, lines := lineListener(t)
	ts := newShellTool(r)

	on := ts.WithNetwork(Network{})
	for _, c := range netCases(t, tcpAddr, udpAddr) {
		if res := runShell(t, on, c.command, 0); res.IsError {
			t.Errorf("with the network on, %s = %+v", c.name, res)
		} else if c.line != "" {
			if got := nextLine(t, lines); got != c.line {
				t.Errorf("with the network on, %s: the listener got %q", c.name, got)
			}
		}
	}

	off := ts.WithNetwork(Network{Off: true, Why: "full-auto mode"})
	enforced, why := NetworkEnforced()
	status := NetworkStatus()
	abi, _ := landlockABI()
	nsErr := netnsErr()
	t.Logf("Landlock ABI %d, network namespace: %v; %s", abi, nsErr, status)
	if nsErr != nil && abi < landlockNetABI {
		// Never pretend: the status says so, and the network is open.
		if enforced || why == "" || !strings.HasPrefix(status, "cannot restrict the network: ") {
			t.Errorf("NetworkEnforced = %v %q, NetworkStatus = %q", enforced, why, status)
		}
		if res := runShell(t, off, netCases(t, tcpAddr, udpAddr)[0].command, 0); res.IsError || strings.Contains(res.Output, "the network is off") {
			t.Errorf("nothing can refuse TCP here, yet dial = %+v", res)
		}
		if got := nextLine(t, lines); got != "tcp sandboxed" {
			t.Errorf("the listener got %q", got)
		}
		return
	}
	if !enforced || strings.HasPrefix(status, "cannot") {
		t.Fatalf("NetworkEnforced = %v %q, NetworkStatus = %q", enforced, why, status)
	}
	// The helper, asked in its own process, agrees with this one.
	if err := helperNetnsErr(current().Helper); (err == nil) != (nsErr == nil) {
		t.Errorf("the helper's namespace check says %v, this process's %v", err, nsErr)
	}
	if nsErr == nil {
		for _, c := range netCases(t, tcpAddr, udpAddr) {
			res := runShell(t, off, c.command, 0)
			t.Logf("off, %s: %s", c.name, strings.SplitN(res.Output, "\n", 2)[0])
			if !res.IsError || !strings.HasPrefix(body(res.Output), c.failure) {
				t.Errorf("in the empty network namespace, %s = %+v", c.name, res)
			}
			if !strings.HasSuffix(res.Output, NetworkNote(Network{Off: true, Why: "full-auto mode"})) {
				t.Errorf("the model is not told the network is off: %q", res.Output)
			}
		}
		probe(t, tcpAddr, udpAddr, lines)
		// The command still runs as the user, in the workspace.
		if res := runShell(t, off, "id -u; pwd", 0); res.IsError || !strings.HasPrefix(body(res.Output), strconv.Itoa(os.Getuid())+"\n"+r.Path()+"\n") {
			t.Errorf("id and pwd in the empty network namespace = %+v", res)
		}
	}
	if res := runShell(t, off, "echo fine", 0); res.IsError || strings.Contains(res.Output, "network") {
		t.Errorf("a command that needs no network, with it off = %+v", res)
	}
}

// TestSandboxNetworkLandlockOnly: where user namespaces are refused, the
// helper falls back to Landlock, which (ABI 4+) refuses TCP connect and bind
// while UDP and Multipath TCP get through (measured, and documented as not
// covered); the command still runs.
func TestSandboxNetworkLandlockOnly(t *testing.T) {
	abi, why := landlockABI()
	r, _, _ := newTree(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if netnsErr() == nil {
		// Refuse them to the helper: it runs in a user namespace that may
		// make none.
		Set(Config{Helper: []string{exe, "__no-userns"}})
		t.Cleanup(func() { Set(Config{}) })
	} else {
		useSandbox(t) // refused here already
	}
	// The helper itself says it has no network namespace, and the status
	// rests on Landlock alone.
	err = helperNetnsErr(current().Helper)
	enforced, whyNot := NetworkEnforced()
	if err == nil || enforced != (abi >= landlockNetABI) {
		t.Errorf("helper's namespace check: %v; NetworkEnforced = %v %q (Landlock ABI %d)", err, enforced, whyNot, abi)
	}
	tcpAddr, udpAddr, lines := lineListener(t)
	off := newShellTool(r).WithNetwork(Network{Off: true, Why: "full-auto mode"})
	if res := runShell(t, off, "echo fine", 0); res.IsError || withoutWall(res.Output) != reported(0, "fine\n") {
		t.Fatalf("the helper without user namespaces = %+v", res)
	}
	// With the network on, too, it runs the command without a mount
	// namespace (every socket reachable, as doctor says).
	if res := runShell(t, newShellTool(r), "echo fine", 0); withoutWall(res.Output) != reported(0, "fine\n") {
		t.Fatalf("the helper without user namespaces, network on = %+v", res)
	}
	cases := netCases(t, tcpAddr, udpAddr)
	if abi < landlockNetABI {
		t.Logf("Landlock ABI %d (%s): nothing refuses TCP without a network namespace", abi, why)
		if res := runShell(t, off, cases[0].command, 0); res.IsError {
			t.Errorf("dial = %+v", res)
		}
		if got := nextLine(t, lines); got != "tcp sandboxed" {
			t.Errorf("the listener got %q", got)
		}
		return
	}
	for _, c := range []netCase{cases[0], cases[3]} {
		res := runShell(t, off, c.command, 0)
		if !res.IsError || !strings.HasPrefix(body(res.Output), c.failure) || !strings.Contains(res.Output, "permission denied") {
			t.Errorf("Landlock alone, %s = %+v", c.name, res)
		}
	}
	probe(t, tcpAddr, udpAddr, lines)
	for _, c := range []netCase{cases[1], cases[2]} {
		res := runShell(t, off, c.command, 0)
		got := "refused"
		if !res.IsError {
			got = nextLine(t, lines)
		}
		t.Logf("Landlock ABI %d alone, %s: %s", abi, c.name, got)
	}
}

func TestNetworkStatusByABI(t *testing.T) {
	noNS := errors.New("fork/exec /bin/sh: no space left on device")
	for _, tt := range []struct {
		abi      int
		why      string
		nsErr    error
		enforced bool
		want     string
	}{
		{0, "this kernel has no Landlock", noNS, false, "cannot restrict the network: this kernel has no Landlock, and no network namespace (fork/exec /bin/sh: no space left on device); commands have the network in every mode"},
		{3, "", noNS, false, "cannot restrict the network: Landlock ABI 3 has no network rules (ABI 4, Linux 6.7, has them), and no network namespace (fork/exec /bin/sh: no space left on device); commands have the network in every mode"},
		{4, "", noNS, true, "Landlock ABI 4: where the network is off, commands' TCP connect and bind are refused (localhost included); not covered, with no network namespace here (fork/exec /bin/sh: no space left on device): UDP (DNS included), Multipath TCP, unix sockets"},
		{0, "this kernel has no Landlock", nil, true, "where the network is off, commands run in an empty network namespace, hearth's socket hidden: no address is reachable, localhost included (TCP, UDP and DNS, Multipath TCP); not covered: the unix sockets HEARTH_SANDBOX_SOCKETS allows"},
		{7, "", nil, true, "where the network is off, commands run in an empty network namespace, hearth's socket hidden: no address is reachable, localhost included (TCP, UDP and DNS, Multipath TCP), and Landlock ABI 7 refuses TCP connect and bind too; not covered: the unix sockets HEARTH_SANDBOX_SOCKETS allows"},
	} {
		if ok, _ := netStatus(tt.abi, tt.why, tt.nsErr); ok != tt.enforced {
			t.Errorf("netStatus(%d, %v) = %v", tt.abi, tt.nsErr, ok)
		}
		if got := networkStatus(tt.abi, tt.why, tt.nsErr); !strings.HasPrefix(body(got), tt.want) {
			t.Errorf("networkStatus(%d, %v) =\n%q\nwant the prefix\n%q", tt.abi, tt.nsErr, got, tt.want)
		}
	}
}

// TestHelperNetworkFlag: the helper is asked for --no-network exactly when
// the call's network is off, and for the mount namespace's covers in both
// cases, and parses them.
func TestHelperNetworkFlag(t *testing.T) {
	sb := Config{Helper: []string{"/bin/hearth", "__sandbox-exec"}, Socket: "/run/h/hearth.sock", Sockets: []string{"/run/a.sock", "/run/b.sock"}, RuntimeDir: "/run/user/7"}
	for _, off := range []bool{false, true} {
		args := sb.helperArgs("/ws", "true", Network{Off: off})
		if got := slices.Contains(args, noNetworkFlag); got != off {
			t.Errorf("Off=%v: helper args %q", off, args)
		}
		p, err := parseHelperArgs(args[2:])
		if err != nil || p.noNet != off || p.command != "true" || p.socket != sb.Socket || !slices.Equal(p.allow, sb.Sockets) || p.runtimeDir != sb.RuntimeDir || p.tmp == "" {
			t.Errorf("Off=%v: parseHelperArgs(%q) = %+v, %v", off, args[2:], p, err)
		}
	}
}
