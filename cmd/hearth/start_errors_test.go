//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// deadURL is a base URL nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/v1"
}

// A socket path longer than sun_path holds: serve names the limit and the
// fix instead of "bind: invalid argument"; doctor's socket line says the
// same; ask says it and that --no-daemon (no socket) avoids it.
func TestSocketPathTooLong(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	dir := filepath.Join(filepath.Dir(e.sock), strings.Repeat("d", 120))
	sock := filepath.Join(dir, "hearth.sock")
	want := fmt.Sprintf("the socket path %s is %d bytes, over the system's limit of %d: set HEARTH_SOCKET to a shorter path", sock, len(sock), maxSun())
	env := append(append([]string(nil), e.env...), "HEARTH_SOCKET="+sock)

	serve := exec.Command(binary, "serve")
	serve.Env = env
	if out, err := serve.CombinedOutput(); err == nil || !strings.Contains(string(out), want) || strings.Contains(string(out), "invalid argument") {
		t.Errorf("serve: %v\n%s\nwant %q", err, out, want)
	}
	if code, out := doctorRun(t, e, "HEARTH_SOCKET="+sock); code != 1 || !hasLine(out, "fail", "socket", want) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	r := e.ask(t, []string{"HEARTH_SOCKET=" + sock}, "", "hi")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "hearth: the daemon could not start: "+want) || !strings.Contains(r.stderr, "--no-daemon") {
		t.Errorf("ask: exit %d\n%s", r.code, r.stderr)
	}
}

// A socket directory the user cannot write to (here, one of root's that
// the user may only traverse), or cannot create: serve says which
// directory, that it is not writable and the fix, and doctor's socket line
// agrees instead of "ok".
// As root the commands run as nobody, who cannot write there.
func TestUnwritableSocketDirectory(t *testing.T) {
	e := newE2E(t)
	base := t.TempDir()
	sockDir := filepath.Join(base, "run")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, as := asOtherUser(t, base)
	if as == nil {
		os.Chmod(sockDir, 0o500) // this user's own, without write
	}
	sock := filepath.Join(sockDir, "hearth.sock")
	want := "the socket directory " + sockDir + " is not writable"
	fix := "set HEARTH_SOCKET to a path in a directory you can write"
	env := append(append([]string(nil), e.env...), "HEARTH_SOCKET="+sock,
		"HEARTH_DATA_DIR="+filepath.Join(base, "data"), "HOME="+filepath.Join(base, "home"))
	command := func(args ...string) (int, string) {
		c := exec.Command(bin, args...)
		c.Env, c.Dir, c.SysProcAttr = env, base, as
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := command("serve"); code != 1 || !strings.Contains(out, want) || !strings.Contains(out, fix) || strings.Contains(out, "socket lock") {
		t.Errorf("serve: exit %d\n%s\nwant %q and %q", code, out, want, fix)
	}
	if code, out := command("doctor"); code != 1 || !hasLine(out, "fail", "socket", want) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	// A socket directory to be made in it: the same, naming both.
	sub := filepath.Join(sockDir, "sub")
	env = append(env, "HEARTH_SOCKET="+filepath.Join(sub, "hearth.sock"))
	want = "the socket directory " + sub + " cannot be created: " + sockDir + " is not writable"
	if code, out := command("serve"); code != 1 || !strings.Contains(out, want) || !strings.Contains(out, fix) {
		t.Errorf("serve, directory to create: exit %d\n%s\nwant %q", code, out, want)
	}
	if code, out := command("doctor"); code != 1 || !hasLine(out, "fail", "socket", want) {
		t.Errorf("doctor, directory to create: exit %d\n%s", code, out)
	}
}

// asOtherUser returns, when the tests run as root, the credentials of
// nobody and a copy of the hearth binary nobody may run, with base and its
// data and home directories made reachable (and the latter two writable)
// by nobody; otherwise the binary and nil.
func asOtherUser(t *testing.T, base string) (string, *syscall.SysProcAttr) {
	t.Helper()
	if os.Getuid() != 0 {
		return binary, nil
	}
	const nobody = 65534
	for d := base; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o005)
		}
	}
	for _, d := range []string{"data", "home"} {
		p := filepath.Join(base, d)
		if err := os.Mkdir(p, 0o700); err != nil || os.Chown(p, nobody, nobody) != nil {
			t.Fatalf("%s for nobody: %v", p, err)
		}
	}
	// The binary where nobody may run it.
	bin := filepath.Join(base, "hearth")
	src, err := os.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
}

// maxSun is the longest socket path the system takes: sun_path less its
// terminating NUL.
func maxSun() int { return len(syscall.RawSockaddrUnix{}.Path) - 1 }

// Nothing listens at the base URL: the turn fails saying the model API
// could not be reached at that URL and what to check — not that a
// connection was lost, nor that hearth switched to HTTP streaming, since
// nothing ever connected.
func TestUnreachableModelAPI(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	dead := deadURL(t)
	r := e.ask(t, []string{"OPENAI_BASE_URL=" + dead}, "", "hi")
	want := "could not reach the model API at " + dead + ": "
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "check OPENAI_BASE_URL and your network") ||
		strings.Contains(r.stderr, "lost") || strings.Contains(r.stderr, "HTTP streaming") {
		t.Errorf("ask with nothing at %s: exit %d\n%s\nwant %q", dead, r.code, r.stderr, want)
	}
}

// doctor's model api line, with a daemon that cannot reach its API, reads
// as what it is: no "the daemon reaches … cannot be reached".
func TestDoctorDaemonCannotReachAPI(t *testing.T) {
	e := newE2E(t)
	e.env = append(e.env, "OPENAI_BASE_URL="+deadURL(t)) // the last one wins
	e.serve()
	code, out := doctorRun(t, e)
	if code != 1 || !hasLine(out, "fail", "model api", "from the daemon: ws://127.0.0.1:") || !strings.Contains(out, "cannot be reached") ||
		strings.Contains(out, "reaches") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
