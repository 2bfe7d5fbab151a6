package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// netProbes are hidden subcommands of this test binary that a sandboxed
// shell command runs to try the network, whatever tools the machine has:
// each prints what happened and exits 0 when the network let it through.
var netProbes = map[string]func(args []string) int{
	// __dial ADDR [PROTO]: connect over TCP (or "mptcp") and send one line.
	"__dial": func(args []string) int {
		var d net.Dialer
		d.SetMultipathTCP(len(args) > 1 && args[1] == "mptcp")
		c, err := d.DialContext(context.Background(), "tcp", args[0])
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		defer c.Close()
		if _, err := fmt.Fprintln(c, "sandboxed"); err != nil {
			fmt.Println("write:", err)
			return 1
		}
		fmt.Println("connected")
		return 0
	},
	// __dial-unix PATH: connect to a unix socket.
	"__dial-unix": func(args []string) int {
		c, err := net.Dial("unix", args[0])
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
		return 0
	},
	// __udp ADDR: send one datagram.
	"__udp": func(args []string) int {
		c, err := net.Dial("udp", args[0])
		if err == nil {
			_, err = fmt.Fprintln(c, "sandboxed")
			c.Close()
		}
		if err != nil {
			fmt.Println("udp:", err)
			return 1
		}
		fmt.Println("sent")
		return 0
	},
	// __listen [PROTO]: bind a TCP (or "mptcp") port on localhost.
	"__listen": func(args []string) int {
		var lc net.ListenConfig
		lc.SetMultipathTCP(len(args) > 0 && args[0] == "mptcp")
		l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		l.Close()
		fmt.Println("listening")
		return 0
	},
}

// probeCommand is the shell command line that runs probe with args.
func probeCommand(t *testing.T, probe string, args ...string) string {
	t.Helper()
	exe, err := probeExe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + exe + "' " + probe
	for _, a := range args {
		cmd += " " + a
	}
	return cmd
}

// probeDir holds probeExe's copy; TestMain removes it.
var probeDir string

// probeExe is this test binary where a sandboxed command can run it: go
// test builds it under /tmp, which commands see a private copy of, so it
// is copied once to a directory under /var/tmp.
var probeExe = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if probeDir, err = os.MkdirTemp("/var/tmp", "hearth-probe-"); err != nil {
		return "", err
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst := filepath.Join(probeDir, filepath.Base(exe))
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return dst, err
})
