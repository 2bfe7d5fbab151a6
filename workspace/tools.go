package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// Tool is one function the model may call: its name, description and JSON
// Schema as sent to the model, plus what the editor and the permission logic
// need to know about it. Tools are fixed values, built once per package.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema object; additionalProperties false; required fields listed
	Kind        string          // ACP tool kind: "read", "search", "edit", "execute"
	ReadOnly    bool            // false for tools that need the user's permission
	// Grammar is, for a tool that may be offered as a custom tool with
	// freeform input (apply_patch), the Lark grammar of that input; the
	// input is then what the function form takes as its one argument,
	// "input". "" for the other tools.
	Grammar string
}

// Spec returns the Responses API function-tool JSON for t. Its bytes are the
// same on every call: the session keeps requests incremental only while the
// tools stay byte-identical, so the encoding is a struct (fixed field order),
// never a map.
func (t Tool) Spec() json.RawMessage {
	spec := struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}{"function", t.Name, t.Description, t.Parameters, false}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(spec); err != nil {
		// Only invalid Parameters can get here, and the tests check every
		// schema; report rather than crash.
		return json.RawMessage(fmt.Sprintf(`{"type":"function","name":%q,"error":%q}`, t.Name, err.Error()))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// CustomSpec returns the Responses API custom-tool JSON for t, for the
// model families trained to write its input freeform: {type: "custom",
// name, description, format: {type: "grammar", syntax: "lark",
// definition}}. The model's custom_tool_call carries the input as text; run
// it as the function form, with {"input": text}. Nil for a tool without a
// Grammar. Its bytes are the same on every call, as Spec's.
func (t Tool) CustomSpec() json.RawMessage {
	if t.Grammar == "" {
		return nil
	}
	type format struct {
		Type       string `json:"type"`
		Syntax     string `json:"syntax"`
		Definition string `json:"definition"`
	}
	spec := struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Format      format `json:"format"`
	}{"custom", t.Name, t.Description, format{"grammar", "lark", t.Grammar}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(spec); err != nil {
		return nil // strings always encode
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Result is the outcome of one tool call. Created by Toolset.Run; a plain
// value the caller owns.
type Result struct {
	Output    string    // what goes back to the model as function_call_output.output
	IsError   bool      // the call failed; Output explains why and what to do instead
	Locations []string  // workspace-relative, slash-separated paths the call touched
	Title     string    // short human title for the editor, e.g. "Read README.md"
	Hash      string    // read_file: sha256 hex of the whole file, for the session's read set; write_file, edit_file: of the new content
	Diff      *FileDiff // write_file, edit_file: what changed
	// Files is, for apply_patch, what changed in each file, in the patch's
	// order (Diff and Hash stay empty): each file's new content and its
	// hash, for the read set, a deleted file or a move's source to forget.
	Files []FileDiff
	// Buffer is set when the text came from the editor (read_file) or went
	// to it (write_file, edit_file): the model knows the buffer, which the
	// disk may not hold until the user saves.
	Buffer bool
	// Content is, for a read_file of text, the whole text read (its hash
	// is Hash) when it is at most watch.MaxContent bytes, for the read set to diff
	// against without reading the file again ("" with the hash of nothing
	// is an empty file). Nothing else keeps a copy of the file.
	Content string
	// Image is, for a read_file of a PNG, JPEG, GIF or WebP file, the image
	// itself, for the model to see; Output then describes it.
	Image *Image
}

// toolDef is a Tool plus what Run needs to decode and execute it.
type toolDef struct {
	Tool
	fields  []string // argument names, in schema order, for error messages
	example string   // a valid call, shown when the arguments are malformed
	run     func(ts *Toolset, ctx context.Context, d *toolDef, args json.RawMessage) Result
	preview previewFunc // nil for the read-only tools: readOnlyPreviews has theirs
}

// toolDefs lists the tools in the order they are offered to the model.
var toolDefs = []toolDef{readFileDef, listDirDef, grepDef, viewImageDef, writeFileDef, editFileDef, applyPatchDef, shellDef, execCommandDef, writeStdinDef}

// Toolset is the set of tools of one workspace. Created by NewToolset; safe
// for concurrent use once OnWrite is set; it starts no goroutine that
// outlives a call and has nothing to close.
type Toolset struct {
	// at is the root, and the working directory of the session a copy made
	// by In serves (the root itself on the shared Toolset).
	at  place
	ed  Editor          // the editor of the one call a copy made by via runs; zero on the shared Toolset
	net sandbox.Network // the network of the one call a copy made by WithNetwork runs; zero (on) on the shared Toolset
	// access is what the one call a copy made by WithAccess runs may
	// write; zero (the mode's) on the shared Toolset.
	access sandbox.Access

	// live shows a running command's output, for the one call a copy
	// made by WithLive runs; nil on the shared Toolset.
	live func(output string)

	// procs are the processes of the session the one call a copy made by
	// WithProcesses serves (exec_command, write_stdin); nil on the shared
	// Toolset.
	procs *Processes

	// plants finds the repositories shell commands plant and disarms them
	// (sandbox/planted_repo.go); shared by the copies; nil on a Toolset not made
	// by NewToolset.
	plants *sandbox.PlantGuard

	// OnWrite, if set, is called just before each write of write_file,
	// edit_file or apply_patch with the file's workspace-relative path and
	// its new content (which the callee must not modify), on the goroutine
	// running the call, so a watcher can tell hearth's own writes from the
	// user's. Set it before the first Run; it must not block.
	OnWrite func(rel string, content []byte)

	// Checkpoint, if set, is called before each file change of write_file,
	// edit_file or apply_patch, on the goroutine running the call, with the
	// file's pre-image (checkpoint.go); an error refuses the change, since
	// a change whose pre-image is not kept could not be undone. Set it on
	// a copy made for one call (In's), never on the shared Toolset.
	Checkpoint func(ctx context.Context, c Change) error

	// Commands, if set, is told of the files the commands of shell and
	// exec_command change (command_changes.go). Set it on a copy made for
	// one call, like Checkpoint.
	Commands CommandChanges
}

// NewToolset returns the tools of the workspace at root.
func NewToolset(root *Root) *Toolset {
	return &Toolset{at: place{root: root}, plants: sandbox.NewPlantGuard()}
}

// place is where a call stands: the workspace root, and the working
// directory of the session it serves. A plain value, copied with its
// Toolset.
type place struct {
	root *Root
	// dir is the working directory, relative to the root with the OS's
	// separators; "" is the root. The model's relative paths start there,
	// the paths it is shown are relative to it, and the shell runs there.
	dir string
}

// files is the fileWriter of ts's call: its place, editor and OnWrite.
func (ts *Toolset) files() fileWriter {
	return fileWriter{at: ts.at, ed: ts.ed, onWrite: ts.OnWrite, before: ts.Checkpoint}
}

// In returns a copy of ts for a session whose working directory is dir, a
// directory inside the root named relative to it ("" or "." is the root):
// the model's relative paths start at dir (a path may lead above it, never
// out of the root), the paths in outputs and titles are relative to it,
// and the shell runs there. Result.Locations, the diffs' paths and OnWrite
// stay relative to the root. The copy lives for one call, like via's.
func (ts *Toolset) In(dir string) *Toolset {
	c := *ts
	c.at.dir = filepath.Clean(filepath.FromSlash(dir))
	if c.at.dir == "." {
		c.at.dir = ""
	}
	return &c
}

// resolveName resolves the model's path p (relative to the working
// directory) as Root.resolveName does.
func (at place) resolveName(p string) (abs, name string, err error) {
	return at.root.resolveNameIn(at.dir, p)
}

// show is rel, a slash-separated path relative to the root (as Root.Rel
// gives it), as the model names it: relative to the working directory.
func (at place) show(rel string) string {
	if at.dir == "" || filepath.IsAbs(rel) {
		return rel
	}
	s, err := filepath.Rel(at.dir, filepath.FromSlash(rel))
	if err != nil {
		return rel
	}
	return filepath.ToSlash(s)
}

// workdir is the absolute path of the working directory: where the shell
// runs.
func (at place) workdir() string { return filepath.Join(at.root.Path(), at.dir) }

// Tools returns the tools in a fixed order.
func (ts *Toolset) Tools() []Tool {
	tools := make([]Tool, len(toolDefs))
	for i, d := range toolDefs {
		tools[i] = d.Tool
		tools[i].Parameters = bytes.Clone(d.Parameters)
	}
	return tools
}

// Lookup returns the tool called name.
func (ts *Toolset) Lookup(name string) (Tool, bool) {
	d := findTool(name)
	if d == nil {
		return Tool{}, false
	}
	t := d.Tool
	t.Parameters = bytes.Clone(d.Parameters)
	return t, true
}

func findTool(name string) *toolDef {
	for i := range toolDefs {
		if toolDefs[i].Name == name {
			return &toolDefs[i]
		}
	}
	return nil
}

// Run executes one call of the tool name with the model's JSON arguments.
// It never returns a Go error or panics on bad input: every failure is a
// Result with IsError set. Cancelling ctx stops long work; the Result then
// says the call was cancelled.
func (ts *Toolset) Run(ctx context.Context, name string, args json.RawMessage) (res Result) {
	defer func() {
		// A panic here is a hearth bug; the turn survives it and the model
		// is told the failure was not its fault.
		if p := recover(); p != nil {
			res = Result{IsError: true, Output: fmt.Sprintf("internal error in tool %s: %v; this is a bug in hearth, not in your call", name, p)}
		}
	}()
	d := findTool(name)
	if d == nil {
		return unknownToolResult(name)
	}
	if ctx.Err() != nil {
		return cancelledResult(name)
	}
	return d.run(ts, ctx, d, args)
}

// decodeArgs decodes the model's arguments into v (a pointer to a struct of
// pointer fields, so missing ones stay nil). It returns "" on success, else a
// message for the model naming the problem and showing a valid call.
func decodeArgs(d *toolDef, raw json.RawMessage, v any) string {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		trimmed = []byte("{}") // some models send nothing for "no arguments"
	}
	if trimmed[0] != '{' {
		return fmt.Sprintf("arguments for %s must be a JSON object, e.g. %s", d.Name, d.example)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return fmt.Sprintf("arguments for %s have extra data after the JSON object; send exactly one object, e.g. %s", d.Name, d.example)
		}
		return ""
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Sprintf("argument %q of %s must be %s, not %s; e.g. %s", typeErr.Field, d.Name, jsonTypeName(typeErr.Type), typeErr.Value, d.example)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("arguments for %s are not valid JSON (%v); send a JSON object, e.g. %s", d.Name, stripJSONPrefix(err), d.example)
	case strings.Contains(err.Error(), "unknown field"):
		msg := strings.Replace(stripJSONPrefix(err), "unknown field", "unknown argument", 1)
		return fmt.Sprintf("%s for %s; allowed arguments: %s", msg, d.Name, strings.Join(d.fields, ", "))
	default:
		return fmt.Sprintf("invalid arguments for %s (%v); e.g. %s", d.Name, stripJSONPrefix(err), d.example)
	}
}

func stripJSONPrefix(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// jsonTypeName names a Go argument type the way the schema does.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	default:
		return "a " + t.String()
	}
}

func unknownToolResult(name string) Result {
	names := make([]string, len(toolDefs))
	for i, t := range toolDefs {
		names[i] = t.Name
	}
	return errorResult(fmt.Sprintf("unknown tool %q; available tools: %s", name, strings.Join(names, ", ")))
}

func missingArg(d *toolDef, name string) Result {
	return errorResult(fmt.Sprintf("missing required argument %q for %s; e.g. %s", name, d.Name, d.example))
}

func errorResult(msg string) Result { return Result{IsError: true, Output: msg} }

func cancelledResult(tool string) Result {
	return errorResult(fmt.Sprintf("%s was cancelled before it finished", tool))
}
