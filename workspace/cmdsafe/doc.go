// Package cmdsafe reads a shell command line the model wants to run and
// answers two questions about it without running anything: does it only
// read (ReadOnly), and which command prefixes a user's "always allow" of
// it may become (RulePrefixes, Covered).
//
// It understands a conservative subset of sh (Parse): plain words with
// quotes and escapes, pipelines, && || ; and newlines, the redirections
// that write nothing (2>&1, >/dev/null, < FILE). Anything outside it — a
// substitution, a variable, a subshell or group, backgrounding, a here
// document, a redirection to a file, an assignment — makes the line
// "not understood", and a line not understood is never read-only and never
// covered by a rule: the user is asked. A program is read-only only when it
// is on the allowlist (readonly.go) and none of its arguments is one of
// its flags that writes or runs another program.
//
// Its functions are pure: no state, nothing to close. It imports the
// standard library only; the daemon imports it.
package cmdsafe
