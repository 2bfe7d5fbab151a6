package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDirectCommand: a line that is one program and literal words runs
// without a shell, with the words the shell would have passed; anything
// the shell would treat otherwise goes to the shell.
func TestDirectCommand(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "PWD=/elsewhere"}
	script := filepath.Join(dir, "run.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755)
	noShebang := filepath.Join(dir, "plain")
	os.WriteFile(noShebang, []byte("echo hi\n"), 0o755)
	direct := map[string][]string{
		"cat notes.txt":                {"cat", "notes.txt"},
		"  ls   -la\tsrc ":             {"ls", "-la", "src"},
		`grep -n "func main" cmd/x.go`: {"grep", "-n", "func main", "cmd/x.go"},
		"grep -rn 'a $b `c` \\d' .":    {"grep", "-rn", "a $b `c` \\d", "."},
		"git log --format=%H -n 3":     {"git", "log", "--format=%H", "-n", "3"},
		"./run.sh a=b ''":              {"./run.sh", "a=b", ""},
		"sed -n 1,20p résumé.txt":      {"sed", "-n", "1,20p", "résumé.txt"},
		`wc -l "a b"x'c d'`:            {"wc", "-l", "a bxc d"},
	}
	for line, want := range direct {
		p, ok := directCommand(line, dir, env)
		if !ok {
			t.Errorf("%q goes to the shell", line)
			continue
		}
		if !slices.Equal(p.argv, want) {
			t.Errorf("%q: argv %q, want %q", line, p.argv, want)
		}
		if p.env[len(p.env)-1] != "PWD="+dir || slices.Contains(p.env, "PWD=/elsewhere") {
			t.Errorf("%q: the environment's PWD is not the directory: %q", line, p.env)
		}
	}
	shell := []string{
		"", "cat a > b", "cat a >>b", "cat <a", "ls | wc", "ls; ls", "ls && ls", "ls &", "echo hi", "printf x",
		"cd src", "true", "test -f x", "[ -f x ]", "A=1 env", "ls *.go", "ls ?", "ls [ab]", "ls ~", "ls ~/x",
		"ls $HOME", "ls ${HOME}", "ls `pwd`", "ls $(pwd)", `ls "$HOME"`, `ls "a\"b"`, `ls \x`, "ls # c",
		"ls\nrm x", "ls (x)", "{ ls; }", "if true; then ls; fi", "! ls", "ls 'unterminated", `ls "unterminated`,
		"./plain", "nosuchprogram-xyz", "exec ls", "'ls' x", "time ls", "ls !x", "ls a^b",
	}
	for _, line := range shell {
		if p, ok := directCommand(line, dir, env); ok {
			t.Errorf("%q runs without the shell as %q", line, p.argv)
		}
	}
	if _, ok := directCommand("ls", dir, []string{"PATH=bin:/usr/bin"}); ok {
		t.Error("a relative PATH entry: the shell's lookup depends on the directory")
	}
	if p, ok := directCommand("ls", dir, env); !ok || p.path != "/usr/bin/ls" && p.path != "/bin/ls" {
		t.Errorf("ls found at %q, %v", p.path, ok)
	}
}
