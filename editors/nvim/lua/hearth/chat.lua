-- hearth.chat: one chat buffer per ACP session. Text streams onto the end of
-- the buffer; each tool call is a header line "⏺ title [status]" with its
-- output beneath it, every output line prefixed "  │ " so that the fold
-- expression closes it into one fold. The model's thoughts are a block of
-- their own: a header line "✻ Thinking…" (then "✻ Thought: first words…")
-- that starts a fold, and the text beneath it prefixed "  ┊ ".
local nn = require('hearth.rpc').nn

local M = {}

M.ns = vim.api.nvim_create_namespace('hearth_chat')
M.OUT = '  │ ' -- prefix of tool output lines (what the fold expression matches)
M.THOUGHT = '✻ ' -- prefix of a thought's header line (starts a fold)
M.THINK = '  ┊ ' -- prefix of a thought's text lines
M.THINK_EMPTY = '  ┊' -- an empty line of a thought (no trailing blank)
M.USER = '## You'
M.AGENT = '## hearth'

local Chat = {}
Chat.__index = Chat

function M.new(session_id)
  local self = setmetatable({ sid = session_id, buf = nil }, Chat)
  self:_clear_state()
  return self
end

function Chat:_clear_state()
  self.section = nil -- 'user' | 'agent' | nil (empty buffer)
  self.open = false -- the last line is text still being streamed
  self.pending = '' -- agent text not yet written (coalesced per batch)
  self.tools = {} -- toolCallId -> tool
  self.thought = nil -- the thought block still taking chunks: { mark, text, nbody, dirty }
end

local function set_buf_opts(buf)
  local o = { buftype = 'nofile', bufhidden = 'hide', swapfile = false, modifiable = false, undolevels = -1 }
  for k, v in pairs(o) do
    vim.api.nvim_buf_set_option(buf, k, v)
  end
  vim.api.nvim_buf_set_option(buf, 'filetype', 'hearth')
end

-- The fold of a chat window: a thought (its header line starts the fold, so
-- a closed one shows just the header) and a tool call's output.
M.foldexpr = [[getline(v:lnum)=~#'^✻ '?'>1':getline(v:lnum)=~#'^  [│┊]'?1:0]]
M.foldtext = [[getline(v:foldstart)=~#'^✻ '?getline(v:foldstart).' ('.(v:foldend-v:foldstart).' line'.(v:foldend-v:foldstart>1?'s':'').')':'  │ … '.(v:foldend-v:foldstart+1).' line'.(v:foldend>v:foldstart?'s':'')]]

-- win_opts sets the window-local options that show a chat buffer: thoughts
-- and tool output folded, long lines wrapped.
function M.win_opts(win)
  local o = {
    foldmethod = 'expr', foldexpr = M.foldexpr, foldtext = M.foldtext, foldlevel = 0, foldenable = true,
    foldminlines = 0, wrap = true, linebreak = true, number = false, relativenumber = false, list = false,
  }
  vim.api.nvim_win_call(win, function()
    for k, v in pairs(o) do
      vim.opt_local[k] = v -- :setlocal, so that other windows keep theirs
    end
  end)
end

-- bufnr returns the chat buffer, creating it when missing or wiped.
function Chat:bufnr()
  if self.buf and vim.api.nvim_buf_is_valid(self.buf) then
    return self.buf
  end
  self:_clear_state()
  local buf = vim.api.nvim_create_buf(true, true)
  pcall(vim.api.nvim_buf_set_name, buf, 'hearth://' .. self.sid)
  set_buf_opts(buf)
  vim.api.nvim_buf_set_var(buf, 'hearth_session', self.sid)
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      M.win_opts(vim.api.nvim_get_current_win())
    end,
  })
  self.buf = buf
  if M.on_buffer then
    M.on_buffer(buf, self.sid)
  end
  return buf
end

-- on_buffer, when set (init.lua sets it), is called with each chat buffer
-- as it is created and its session's id: the buffer's mappings.
M.on_buffer = nil

-- reset empties the buffer (session/load replays into it).
function Chat:reset()
  local buf = self:bufnr()
  self:_edit(function()
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  self:_clear_state()
end

-- window returns a window in the current tab showing the buffer, if any.
function Chat:window()
  local buf = self:bufnr()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

-- show makes the buffer visible: its own window, else a window showing
-- another hearth chat, else a new split (opener is an Ex command such as
-- 'botright vsplit'). Focus stays where it was unless focus is true.
function Chat:show(opener, focus)
  local buf = self:bufnr()
  local win = self:window()
  if not win then
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.api.nvim_buf_get_option(b, 'filetype') == 'hearth' then
        win = w
        break
      end
    end
    local from = vim.api.nvim_get_current_win()
    if win then
      vim.api.nvim_win_set_buf(win, buf)
    else
      vim.cmd(opener or 'botright vsplit')
      win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(win, buf)
      if not focus then
        vim.api.nvim_set_current_win(from)
      end
    end
    M.win_opts(win)
    local n = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_win_set_cursor(win, { n, 0 })
  end
  if focus then
    vim.api.nvim_set_current_win(win)
  end
  return win
end

-- _edit runs fn with the buffer modifiable; windows whose cursor was on the
-- last line follow the new end.
function Chat:_edit(fn)
  local buf = self:bufnr()
  local n0 = vim.api.nvim_buf_line_count(buf)
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= n0 then
      table.insert(follow, win)
    end
  end
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  local ok, err = pcall(fn)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  local n = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    pcall(vim.api.nvim_win_set_cursor, win, { n, 0 })
  end
  if not ok then
    error(err, 0)
  end
end

function Chat:_empty()
  local buf = self:bufnr()
  return vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
end

-- _append adds whole lines at the end (replacing the empty first line of a
-- fresh buffer). Returns the 0-based row of the first added line.
function Chat:_append(lines)
  local buf = self:bufnr()
  local row
  if self:_empty() then
    row = 0
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, lines)
  else
    row = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, row, row, false, lines)
  end
  return row
end

-- _text streams text: the first piece continues the open line.
function Chat:_text(text)
  if text == '' then
    return
  end
  local buf = self:bufnr()
  local pieces = vim.split(text, '\n', { plain = true })
  self:_edit(function()
    if self.open then
      local n = vim.api.nvim_buf_line_count(buf)
      local last = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
      pieces[1] = last .. pieces[1]
      vim.api.nvim_buf_set_lines(buf, n - 1, n, false, pieces)
    else
      self:_append(pieces)
    end
  end)
  self.open = true
end

-- _section starts a "## You" / "## hearth" block unless it is the current one.
function Chat:_section(role)
  if self.section == role then
    return
  end
  self:_end_thought()
  self:flush()
  local lines = {}
  local buf = self:bufnr()
  local n = vim.api.nvim_buf_line_count(buf)
  if not self:_empty() and vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] ~= '' then
    lines[1] = '' -- one blank line between blocks
  end
  table.insert(lines, role == 'user' and M.USER or M.AGENT)
  self:_edit(function()
    self:_append(lines)
  end)
  self.section = role
  self.open = false
end

-- flush writes agent text buffered by agent_text and thought_text.
function Chat:flush()
  if self.pending ~= '' then
    local text = self.pending
    self.pending = ''
    self:_text(text)
  end
  if self.thought and self.thought.dirty then
    self:_render_thought(self.thought)
  end
end

function Chat:user_text(text)
  self:_section('user')
  self:_text(text)
end

-- agent_text buffers a chunk; flush (called after every batch of messages
-- and before any other change) writes it.
function Chat:agent_text(text)
  if self.section ~= 'agent' then
    self:_section('agent')
  end
  self:_end_thought()
  self.pending = self.pending .. text
end

-- first_words is the start of a thought for its header: its bold title
-- when it opens with one (as reasoning summaries do), else its first words;
-- Markdown marks dropped, whitespace folded, cut at a word within about 50
-- characters.
function M.first_words(text)
  local s = text:match('^%s*%*%*(.-)%*%*') or text
  s = s:gsub('[*`#]', ''):gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if vim.fn.strchars(s) <= 50 then
    return s
  end
  local cut = vim.fn.strcharpart(s, 0, 50)
  cut = cut:match('^(.*%S)%s') or cut
  return cut .. '…'
end

-- thought_header is the first line of a thought block.
function M.thought_header(th)
  if not th.done then
    return M.THOUGHT .. 'Thinking…'
  end
  local words = M.first_words(th.text)
  return M.THOUGHT .. 'Thought' .. (words ~= '' and (': ' .. words) or '')
end

-- thought_text buffers a chunk of the model's thoughts (agent_thought_chunk)
-- into the current thought block, starting one on a line of its own when
-- there is none; flush writes it. Any other update ends the block.
function Chat:thought_text(text)
  if self.section ~= 'agent' then
    self:_section('agent')
  end
  if not self.thought then
    self:flush()
    local th = { text = '', nbody = 0, done = false }
    local buf = self:bufnr()
    self:_edit(function()
      local row = self:_append({ M.thought_header(th) })
      th.mark = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {})
    end)
    self.open = false
    self.thought = th
  end
  self.thought.text = self.thought.text .. text
  self.thought.dirty = true
end

-- _end_thought writes the current thought block for the last time, with
-- its finished header; what comes next starts below it.
function Chat:_end_thought()
  local th = self.thought
  if not th then
    return
  end
  self.thought = nil
  th.done = true
  self:_render_thought(th)
  self.open = false
end

function Chat:_render_thought(th)
  th.dirty = false
  local buf = self:bufnr()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, M.ns, th.mark, {})
  if not pos or pos[1] == nil then
    return
  end
  local row = pos[1]
  local lines = { M.thought_header(th) }
  local body = vim.split(th.text, '\n', { plain = true })
  if #body > 1 and body[#body] == '' then
    table.remove(body)
  end
  for _, l in ipairs(body) do
    table.insert(lines, l == '' and M.THINK_EMPTY or M.THINK .. l)
  end
  self:_edit(function()
    vim.api.nvim_buf_set_lines(buf, row, row + 1 + th.nbody, false, lines)
    vim.api.nvim_buf_del_extmark(buf, M.ns, th.mark)
    th.mark = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {})
  end)
  th.nbody = #lines - 1
end

-- end_message closes the open line so that what follows starts a new one.
function Chat:end_message()
  self:_end_thought()
  self:flush()
  self.open = false
end

-- note appends a status line (cancelled, errors) to the agent's block.
function Chat:note(text)
  self:_section('agent')
  self:_end_thought()
  self:flush()
  self:_edit(function()
    self:_append({ text })
  end)
  self.open = false
end

-- visible makes s safe to show as it is: control characters, C1 controls
-- and the Unicode bidi controls become escapes, as hearth's CLI prints them
-- (\r, \x1b, \u202e). keep_lines keeps newlines and tabs (an output's
-- lines); without it s is one line (a header, a question), where a newline
-- shows as \n — it cannot start a line of its own, and a buffer line cannot
-- hold one anyway.
function M.visible(s, keep_lines)
  s = (tostring(s):gsub('[%z\1-\31\127]', function(c)
    if keep_lines and (c == '\n' or c == '\t') then
      return c
    end
    local short = { ['\r'] = '\\r', ['\n'] = '\\n', ['\t'] = '\\t' }
    return short[c] or string.format('\\x%02x', c:byte())
  end))
  -- U+0080–U+009F are \194\128–\194\159 in UTF-8.
  s = s:gsub('\194([\128-\159])', function(c)
    return string.format('\\u%04x', c:byte())
  end)
  -- Bidi controls: U+061C; U+200E, U+200F, U+202A–U+202E; U+2066–U+2069.
  s = s:gsub('\216\156', '\\u061c')
  s = s:gsub('\226\128([\142\143\170-\174])', function(c)
    return string.format('\\u20%02x', c:byte() - 128)
  end)
  s = s:gsub('\226\129([\166-\169])', function(c)
    return string.format('\\u20%02x', c:byte() - 64)
  end)
  return s
end

-- content_text renders one ACP content block as text.
function M.content_text(c)
  c = nn(c)
  if type(c) ~= 'table' then
    return ''
  end
  local t = nn(c.type)
  if t == 'text' then
    return nn(c.text) or ''
  elseif t == 'resource_link' then
    return '@' .. (nn(c.uri) or '')
  elseif t == 'resource' then
    local r = nn(c.resource) or {}
    return nn(r.text) or ('@' .. (nn(r.uri) or ''))
  elseif t == 'image' then
    return require('hearth.image').describe(nn(c.mimeType), nn(c.data))
  elseif t == 'audio' then
    return '[' .. t .. ']'
  end
  return ''
end

-- summary turns a tool's raw input into a short argument string.
local function summary(input)
  input = nn(input)
  if input == nil then
    return nil
  end
  if type(input) ~= 'table' then
    return tostring(input)
  end
  for _, k in ipairs({ 'path', 'pattern', 'command', 'url', 'query', 'file' }) do
    local v = nn(input[k])
    if type(v) == 'string' and v ~= '' then
      if k == 'pattern' and type(nn(input.path)) == 'string' then
        return v .. ' ' .. input.path
      end
      return v
    end
  end
  local ok, s = pcall(require('hearth.rpc').json.encode, input)
  if not ok or s == '{}' or s == '[]' then
    return nil
  end
  if #s > 60 then
    s = s:sub(1, 57) .. '...'
  end
  return s
end

-- hunks is a diff's text as the chat shows it: unified hunks with three
-- lines of context ("@@ -a,b +c,d @@", then "  same", "- old", "+ new"), so
-- one changed line of a long file reads as itself. A new file is all "+".
function M.hunks(old, new)
  old = type(old) == 'string' and old or ''
  new = type(new) == 'string' and new or ''
  local function whole(s)
    return (s == '' or s:sub(-1) == '\n') and s or s .. '\n'
  end
  -- vim.diff is xdiff, Git's own (Neovim 0.6+; the plugin needs 0.7)
  local d = vim.diff(whole(old), whole(new), { result_type = 'unified', ctxlen = 3 })
  local lines = {}
  for _, l in ipairs(vim.split(d, '\n', { plain = true })) do
    local mark, rest = l:sub(1, 1), l:sub(2)
    if l:find('^@@') then
      table.insert(lines, l)
    elseif mark == '-' or mark == '+' then
      table.insert(lines, mark .. ' ' .. rest)
    elseif mark == ' ' then
      table.insert(lines, '  ' .. rest)
    end -- '\\ No newline at end of file' and the final empty line: dropped
  end
  return lines
end

local function out_lines(t)
  local lines = {}
  local function add(text)
    local pieces = vim.split(text, '\n', { plain = true })
    if #pieces > 1 and pieces[#pieces] == '' then
      table.remove(pieces)
    end
    for _, p in ipairs(pieces) do
      table.insert(lines, M.OUT .. M.visible(p, true))
    end
  end
  for _, c in ipairs(t.content or {}) do
    c = nn(c) or {}
    local kind = nn(c.type)
    if kind == 'content' then
      add(M.content_text(c.content))
    elseif kind == 'diff' then
      add('diff ' .. (nn(c.path) or ''))
      for _, l in ipairs(M.hunks(nn(c.oldText), nn(c.newText))) do
        add(l)
      end
    elseif kind == 'terminal' then
      add('[terminal ' .. tostring(nn(c.terminalId)) .. ']')
    end
  end
  return lines
end

-- label is what the header says about the call: the agent's latest title
-- for it ("Read a.txt", "Run `go test ./...`"). A title that is one bare
-- word is the tool's name (hearth titles a call so until it is previewed or
-- has run): its main argument follows it ("read_file a.txt"). One line, its
-- controls made visible.
function M.label(t)
  local title = t.title or 'tool'
  if t.args and not title:find('%s') then
    return M.visible(title .. ' ' .. t.args)
  end
  return M.visible(title)
end

-- question is how the permission question names the call: its label, and
-- the whole argument when the label does not hold it (a command's title is
-- its first line, cut): what the user allows is what they read.
function M.question(t)
  local label = M.label(t)
  local args = t.args and M.visible(t.args)
  if args and not label:find(args, 1, true) then
    return label .. ' — ' .. args
  end
  return label
end

function M.header(t)
  return '⏺ ' .. M.label(t) .. ' [' .. M.visible(t.status or 'pending') .. ']'
end

-- tool applies a tool_call (start = true) or tool_call_update; the
-- permission request's toolCall goes through here as an update too.
function Chat:tool(u, start)
  local id = nn(u.toolCallId)
  if id == nil then
    return nil
  end
  id = tostring(id)
  self:_end_thought()
  local t = self.tools[id]
  local title = nn(u.title)
  if not t then
    self:_section('agent')
    self:end_message()
    t = { id = id, title = title, nout = 0 }
    self.tools[id] = t
    local buf = self:bufnr()
    self:_edit(function()
      local row = self:_append({ M.header(t) })
      t.mark = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {})
    end)
    self.open = false
  end
  if title then
    t.title = title
  end
  if nn(u.kind) then
    t.kind = u.kind
  end
  if nn(u.status) then
    t.status = u.status
  end
  if nn(u.rawInput) ~= nil then
    t.args = summary(u.rawInput)
  end
  if nn(u.content) ~= nil then
    t.content = u.content
  end
  if nn(u.locations) ~= nil then
    t.locations = u.locations
  end
  self:_render_tool(t)
  return t
end

-- set_status changes what a call's header says of it ("cancelled").
function Chat:set_status(t, status)
  t.status = status
  self:_render_tool(t)
end

function Chat:_render_tool(t)
  local buf = self:bufnr()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, M.ns, t.mark, {})
  if not pos or pos[1] == nil then
    return
  end
  local row = pos[1]
  local out = out_lines(t)
  local last_line = vim.api.nvim_buf_line_count(buf) - 1
  local tail = row + t.nout == last_line -- the block ends the buffer
  self:_edit(function()
    vim.api.nvim_buf_set_lines(buf, row, row + 1, false, { M.header(t) })
    vim.api.nvim_buf_set_lines(buf, row + 1, row + 1 + t.nout, false, out)
    vim.api.nvim_buf_del_extmark(buf, M.ns, t.mark)
    t.mark = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {})
  end)
  t.nout = #out
  if tail then
    self.open = false
  end
end

-- _output_range is the 1-based first and last line of a call's output.
function Chat:_output_range(t)
  local pos = vim.api.nvim_buf_get_extmark_by_id(self:bufnr(), M.ns, t.mark, {})
  if not pos or pos[1] == nil or t.nout == 0 then
    return nil
  end
  return pos[1] + 2, pos[1] + 1 + t.nout
end

-- reveal puts a call in view in every window showing the chat, for the
-- question asked about it: its output's fold opened, its header at the top
-- of the window so that its diff or command fills the rows above the
-- question (a prompt such as vim.ui.select's list covers the screen's last
-- rows), and the screen redrawn before the prompt blocks. It returns what
-- unreveal needs to put those windows back.
function Chat:reveal(t)
  local pos = vim.api.nvim_buf_get_extmark_by_id(self:bufnr(), M.ns, t.mark, {})
  if not pos or pos[1] == nil then
    return {}
  end
  local header = pos[1] + 1
  local first, last = self:_output_range(t)
  local n = vim.api.nvim_buf_line_count(self:bufnr())
  local shown = {}
  for _, win in ipairs(vim.fn.win_findbuf(self:bufnr())) do
    vim.api.nvim_win_call(win, function()
      local w = { win = win, following = vim.api.nvim_win_get_cursor(win)[1] >= n }
      if first and vim.fn.foldclosed(first) ~= -1 then
        vim.cmd(string.format('silent! %d,%dfoldopen!', first, last))
        w.opened = true
      end
      vim.api.nvim_win_set_cursor(win, { header, 0 })
      vim.fn.winrestview({ topline = header })
      table.insert(shown, w)
    end)
  end
  vim.cmd('redraw')
  return shown
end

-- unreveal closes again the folds reveal opened (once the question is
-- answered): a window with an open fold opens the folds added after it,
-- so the chat would stop folding thoughts and tool output. A window that
-- followed the chat's end follows it again.
function Chat:unreveal(t, shown)
  local first, last = self:_output_range(t)
  for _, w in ipairs(shown or {}) do
    local win = w.win
    if vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == self:bufnr() then
      vim.api.nvim_win_call(win, function()
        if w.opened and first then
          vim.cmd(string.format('silent! %d,%dfoldclose!', first, last))
        end
        if w.following then
          vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(self:bufnr()), 0 })
        end
      end)
    end
  end
end

-- user_mark marks the header of the last "## You" block, which the agent
-- numbered (its prompt's turn): :HearthFork N copies the chat above it.
function Chat:user_mark()
  local buf = self:bufnr()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == M.USER then
      return vim.api.nvim_buf_set_extmark(buf, M.ns, i - 1, 0, {})
    end
  end
end

-- lines_before returns the chat's lines above mark's (user_mark) line,
-- without the blank line that separates it; nil when the mark is gone.
function Chat:lines_before(mark)
  local buf = self:bufnr()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, M.ns, mark, {})
  if not pos or pos[1] == nil then
    return nil
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, pos[1], false)
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

-- lines returns the buffer's text (tests, :HearthStatus).
function Chat:lines()
  self:flush()
  return vim.api.nvim_buf_get_lines(self:bufnr(), 0, -1, false)
end

return M
