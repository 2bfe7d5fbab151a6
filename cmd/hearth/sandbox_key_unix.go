//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// keyFDFlag is the hidden flag naming the pipe a re-executed `hearth serve`
// reads its API key from ("none": there is no key); it is always the first
// argument after "serve".
const keyFDFlag = "--key-fd="

// maxKeyBytes bounds what is read from the key pipe.
const maxKeyBytes = 64 << 10

// hideSecretsFromEnviron re-executes `hearth serve` (same binary, same pid,
// same arguments) without the secrets of the environment it was started
// with, because /proc/PID/environ shows that environment for the process's
// whole life, to anything of the same user — the commands the model runs
// included. It returns only when there is nothing to hide, or when the
// re-exec failed (then the daemon runs as it is, and says so in the log).
//
// Removed: OPENAI_API_KEY, which goes to the new image through a pipe
// (the write end is closed before exec, the read end is inherited and named
// by --key-fd=N), and every variable secretLooking reports — they are not
// needed by the daemon, and commands never saw them anyway (the tool
// environment is an allowlist). A variable HEARTH_TOOL_ENV names is kept:
// the user asked for it to reach commands.
func hideSecretsFromEnviron(args []string) error {
	environ := os.Environ()
	keep := toolEnvNames()
	var clean []string
	key, hasKey := "", false
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "OPENAI_API_KEY":
			key, hasKey = value, true
		case secretLooking(name, value) && !keep[name]:
		default:
			clean = append(clean, kv)
		}
	}
	if !hasKey && len(clean) == len(environ) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The re-executed image always gets --key-fd, so it never re-executes.
	argv := []string{os.Args[0], "serve"}
	if !hasKey {
		argv = append(argv, keyFDFlag+"none")
	}
	if hasKey {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer r.Close() // reached only when the exec fails
		_, err = io.WriteString(w, key)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fd := int(r.Fd())
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return err
		}
		argv = append(argv, keyFDFlag+strconv.Itoa(fd))
	}
	argv = append(argv, args...)
	return syscall.Exec(exe, argv, clean)
}

// takeKeyFD removes a leading --key-fd=N from args and reads the key from
// fd N, closing it; reexeced says the flag was there (this is the second
// image, which never re-executes again).
func takeKeyFD(args []string) (rest []string, key string, reexeced bool, err error) {
	if len(args) == 0 || !strings.HasPrefix(args[0], keyFDFlag) {
		return args, "", false, nil
	}
	v := strings.TrimPrefix(args[0], keyFDFlag)
	if v == "none" { // re-executed to drop other secrets; no key was set
		return args[1:], "", true, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, "", true, errors.New("bad --key-fd: want a file descriptor number above 2")
	}
	f := os.NewFile(uintptr(fd), "api-key")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyBytes))
	if err != nil {
		return nil, "", true, fmt.Errorf("reading the API key from --key-fd: %w", err)
	}
	return args[1:], strings.TrimSpace(string(b)), true, nil
}
