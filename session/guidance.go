package session

import _ "embed" // the guidance text

// Guidance is hearth's guidance to the model, in its own words: how to work
// in the user's repository through their editor, where its instructions
// come from (the environment note, AGENTS.md and their precedence), progress
// and plans, finishing and checking the work, editing safely, which tool
// for what, and how to present the answer. The daemon sends it as every
// request's instructions (Config.Instructions).
//
// Instructions rather than a developer message in the transcript: the
// instructions are settings, encoded once and compared byte for byte with
// the tools (settings.go), so a session's requests stay incremental while
// the text is the same, and a new version reaches every session at its
// next request (one full request, which a daemon's restart makes anyway).
// A developer message would be stored in every session, kept by every
// compaction and frozen at the version its session began with, and
// sessions stored before it would never get one. Its one advantage is the
// cost the instructions pay instead: they are resent on every request
// (previous_response_id does not carry them over), so an incremental
// request's frame is 13.6 KB instead of 7.3, 5.6 KB on the wire instead of
// 1.9 after permessage-deflate, ~50 µs more to compress
// (docs/BENCHMARKS.md) — milliseconds at most on an uplink, against a
// model's seconds.
//
// The text is versioned: changing guidance/vN.md means a new file and a
// new GuidanceVersion (guidance_test.go records each version's sha256).
//
//go:embed guidance/v1.md
var Guidance string

// GuidanceVersion is the version of Guidance (the N of guidance/vN.md).
const GuidanceVersion = 1
