" Syntax of hearth chat buffers.
if exists('b:current_syntax')
  finish
endif
syntax match hearthHeader /^## \(You\|hearth\)$/
syntax match hearthTool /^⏺ .*$/ contains=hearthToolStatus
syntax match hearthToolStatus /\[\(pending\|in_progress\|completed\|failed\)\]$/ contained
syntax match hearthOutput /^  │ .*$/
syntax match hearthDiffAdd /^  │ + .*$/
syntax match hearthDiffDelete /^  │ - .*$/
syntax match hearthDiffHunk /^  │ @@ .*$/
syntax match hearthThought /^✻ .*$/
syntax match hearthThought /^  ┊.*$/
syntax match hearthNote /^\(⏹\|✗\) .*$/
highlight default link hearthHeader Title
highlight default link hearthTool Function
highlight default link hearthToolStatus Comment
highlight default link hearthOutput Comment
highlight default link hearthDiffAdd Identifier
highlight default link hearthDiffDelete Special
highlight default link hearthDiffHunk PreProc
highlight default link hearthThought Comment
highlight default link hearthNote WarningMsg
let b:current_syntax = 'hearth'
