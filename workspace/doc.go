// Package workspace is one open workspace directory as the model sees it:
// the Root every model-supplied path is confined to, and the tools the model
// may call on it (read_file, list_dir, grep so far).
//
// The rules it follows:
//
//   - Confinement: every path from the model goes through Root.Resolve, which
//     evaluates symlinks itself, component by component, and refuses anything
//     whose final destination lies outside the root, including paths that do
//     not exist yet (writes need those).
//   - Tools never fail in Go: bad arguments, missing files, paths outside the
//     root and cancellation all become a Result with IsError set and a
//     message the model can act on, because the model is the one who has to
//     correct the call.
//   - Tool specs are byte-identical on every call, so the session's requests
//     stay incremental.
//
// Imports: workspace imports no other hearth package; the daemon hands it to
// session through session's own interfaces. imports_test.go enforces this.
package workspace
