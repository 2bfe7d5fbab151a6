package cmdsafe

import (
	"strings"
	"testing"
)

func TestReadOnly(t *testing.T) {
	yes := []string{
		"git status", "git status --short", "git diff", "git diff HEAD~1 -- a.go", "git log --oneline -5",
		"git show HEAD:go.mod", "git -C sub log", "git --no-pager diff", "git branch", "git branch -a -v",
		"git branch --list 'feat*'", "git branch --merged main", "git rev-parse --show-toplevel", "git ls-files",
		"git blame -L 1,5 a.go", "git grep -n foo", "rg x", "rg -n 'fn main' src", "rg --files", "ls", "ls -la *.go",
		"cat a b", "head -n 20 README.md", "tail -5 x", "grep -rn foo .", "grep foo *.txt", "find . -name '*.go'",
		"find . -type f -newer a", "sed -n 1,20p a.go", "sed -n '10,$p' a", "sed -n -e 1p -e '$p' x", "sed -ne 5p x",
		"wc -l a b", "pwd", "echo hi", "cd sub && git status", "git status; git diff", "git log | head -20",
		"rg x 2>&1 | head", "ls >/dev/null 2>&1", "cat < a.txt", "rg -l x || true", "git diff\ngit status",
		"git log # what changed", "echo 'a;b|c'", `echo "a b" c\ d`, "sort a | uniq -c", "tree -L 2", "jq .x a.json",
		"date +%F", "fd -e go", "sed --quiet 3p a", "git branch --show-current",
	}
	no := []string{
		"rm x", "rm -rf /", "git commit -m x", "git push", "git checkout x", "git branch newname", "git branch -d x",
		"git branch -D x", "git -c core.pager=sh log", "git --git-dir=x log", "git diff --output=x", "git log --out=x",
		"git grep -O foo", "git grep --open=vim foo", "git stash", "rg --pre cat x", "rg --pre=sh x", "rg x *.go",
		"find . -delete", "find . -exec rm {} ;", "find . -execdir rm x", "find . -fprint out", "find . -ok rm", "find *",
		"sed -i s/a/b/ x", "sed -n 1p -i x", "sed -ni 1p x", "sed 1p x", "sed -n 'w out' x", "sed -n '1e id' x",
		"sed -n -f script x", "sed -n --in-place 1p x", "sed -n --in=x 1p f", "sed -n 1p *", "echo x > f", "echo x >> f",
		"ls >f", "ls 2>err", "cat <> f", "cat << EOF", "echo $(id)", "echo `id`", "echo $HOME", `echo "$HOME"`,
		"ls &", "ls & rm x", "ls &> /dev/null", "(ls)", "{ ls; }", "X=1 ls", "PATH=. ls", "ls | sh", "ls | xargs rm",
		"if true; then ls; fi", "for f in a; do cat $f; done", "! ls", "ls ||", "| ls", "ls ;; ls", "", "   ",
		"cat 'unterminated", `cat "unterminated`, "cat x\\", "sort -o out a", "sort --output=o a", "sort --outp=o a",
		"uniq a b", "tree -o out", "date -s now", "date 010100002020", "file -C x", "fd -x rm", "fd --exec rm",
		"cd a b", "hostname evil", "awk '{print}' a", "python3 -c 'print(1)'", "env ls", "sudo ls", "./ls", "/bin/ls",
		"ls a{b,c}", "git log HEAD@{1}", "cat <(ls)", "ls |& cat", "ls >| f", "ls 1>&-", "git", "git -C", "cat >/dev/nullx",
		"tee x", "cp a b", "mv a b", "touch a", "mkdir a", "chmod +x a", "curl x", "npm test", "go test ./...",
	}
	for _, c := range yes {
		if !ReadOnly(c) {
			_, err := Parse(c)
			t.Errorf("ReadOnly(%q) = false, want true (parse: %v)", c, err)
		}
	}
	for _, c := range no {
		if ReadOnly(c) {
			t.Errorf("ReadOnly(%q) = true, want false", c)
		}
	}
}

func TestParseWords(t *testing.T) {
	cmds, err := Parse(`rg -n 'a b' "c\"d" e\ f | head -3 && git status;ls`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, strings.Join(c.texts(), ","))
	}
	want := []string{`rg,-n,a b,c"d,e f`, "head,-3", "git,status", "ls"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPrefix(t *testing.T) {
	cases := map[string]string{
		"go test ./...":           "go test",
		"go test -run X ./pkg":    "go test",
		"npm run lint -- --fix":   "npm run lint",
		"npm run":                 "",
		"npm test":                "npm test",
		"cargo build --release":   "cargo build",
		"make":                    "make",
		"make test":               "make test",
		"go mod tidy":             "go mod tidy",
		"npx eslint .":            "npx eslint",
		"npx":                     "",
		"python3 -m pytest -x":    "python3 -m pytest",
		"python3 script.py":       "",
		"python3":                 "",
		"sh -c 'go test'":         "",
		"bash build.sh":           "",
		"env GOOS=linux go build": "",
		"sudo make install":       "",
		"xargs rm":                "",
		"./gradlew build":         "./gradlew build",
		"/bin/sh x":               "",
		"git commit -m 'msg'":     "git commit",
		"docker compose up -d":    "docker compose up",
		"rm -rf build":            "rm",
	}
	for line, want := range cases {
		cmds, err := Parse(line)
		if err != nil {
			t.Fatalf("Parse(%q): %v", line, err)
		}
		got, ok := Prefix(cmds[0].texts())
		if got != want || ok != (want != "") {
			t.Errorf("Prefix(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

func TestRulePrefixesAndCovered(t *testing.T) {
	ps, ok := RulePrefixes("git status && go test ./... 2>&1 | tail -20")
	if !ok || strings.Join(ps, "|") != "go test" {
		t.Fatalf("RulePrefixes = %q, %v", ps, ok)
	}
	if _, ok := RulePrefixes("go test $(ls)"); ok {
		t.Fatal("a substitution got a rule")
	}
	if _, ok := RulePrefixes("go test && sh -c x"); ok {
		t.Fatal("a shell got a rule")
	}
	rules := []string{"go test", "npm run lint"}
	for line, want := range map[string]bool{
		"go test ./...":                  true,
		"go test -run X ./a && git diff": true,
		"go vet ./...":                   false,
		"go test ./... && rm -rf x":      false,
		"go test > out.txt":              false,
		"go test $(evil)":                false,
		"npm run lint":                   true,
		"npm run lint:fix":               false,
		"npm run":                        false,
		"X=1 go test":                    false,
		"go tes* ./...":                  false,
		"git status":                     true,
	} {
		if got := Covered(line, rules); got != want {
			t.Errorf("Covered(%q) = %v, want %v", line, got, want)
		}
	}
	if Covered("git status", nil) {
		t.Error("Covered with no rules")
	}
}

// FuzzParse: no input panics, and whatever is read-only parses into
// allowlisted programs only, and does not swallow the line after it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"git status", "rg x | head", "echo $(id)", "ls 2>&1", "sed -n 1p", "a\\\nb", `"a\$"`, "ls #x\nrm y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := Parse(line)
		if !ReadOnly(line) {
			return
		}
		if err != nil {
			t.Fatalf("read-only but not parsed: %q", line)
		}
		for _, c := range cmds {
			if _, ok := readOnlyPrograms[c.Program()]; !ok {
				t.Fatalf("%q: %q is not allowlisted", line, c.Program())
			}
		}
		// Whatever follows a read-only line on a new line is judged too.
		if ReadOnly(line + "\nrm -rf x") {
			t.Fatalf("%q hides the next line", line)
		}
	})
}
