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
// the text is the same; they are resent on every request (previous_response_id
// does not carry them over) — 7.4 KB, which permessage-deflate (level 1)
// sends as 3.5 KB. A developer message would be sent once, but it
// would be stored in every session, kept by every compaction, and frozen
// at the version its session began with; as the instructions, a new
// version reaches every session at its next request (one full request,
// which a daemon's restart makes anyway).
//
// The text is versioned: changing guidance/vN.md means a new file and a
// new GuidanceVersion (guidance_test.go records each version's sha256).
//
//go:embed guidance/v1.md
var Guidance string

// GuidanceVersion is the version of Guidance (the N of guidance/vN.md).
const GuidanceVersion = 1
