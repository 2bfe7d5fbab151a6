package patch

// Grammar is the Lark grammar of an apply_patch input, offered to the
// models trained on the format as a custom tool's freeform grammar. Its
// language is the reference format's: an update's changes are @@ lines
// (bare, or with a line to look after) and hunk lines in any order, a
// bare @@ with no lines after it included; "*** End of File" only after
// an update's last change; an added file has at least one line. Parse
// takes every text the grammar makes, and forgives more (see Parse).
const Grammar = `start: begin_patch operation+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

operation: add_file | delete_file | update_file
add_file: "*** Add File: " PATH LF added_line+
delete_file: "*** Delete File: " PATH LF
update_file: "*** Update File: " PATH LF move_to? changes?
move_to: "*** Move to: " PATH LF

added_line: "+" TEXT? LF
changes: (hunk_header | hunk_line)+ end_of_file?
hunk_header: "@@" LF | "@@ " TEXT LF
hunk_line: HUNK_LINE LF
end_of_file: "*** End of File" LF

PATH: /[^\n]+/
TEXT: /[^\n]+/
HUNK_LINE: /[ +-][^\n]*/
LF: "\n"
`
