-- Headless tests of hearth.nvim against the real `hearth acp` + `hearth sim`.
--   HEARTH_BIN=/path/to/hearth HEARTH_TEST_TMP=/tmp/short-dir \
--   nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=.' -c 'luafile tests/run.lua'
-- Prints one line per test and finally "N passed, M failed"; exits non-zero
-- on any failure.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
local bin = assert(os.getenv('HEARTH_BIN'), 'HEARTH_BIN is not set')
local tmp = assert(os.getenv('HEARTH_TEST_TMP'), 'HEARTH_TEST_TMP is not set')

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

local passed, failed = 0, 0
local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    out('ok   ' .. name)
  else
    failed = failed + 1
    out('FAIL ' .. name .. '\n' .. tostring(err))
  end
end

local function fail(msg, level)
  error(msg, (level or 1) + 1)
end
local function eq(got, want, what)
  if got ~= want then
    fail(string.format('%s: got %s, want %s', what or 'value', vim.inspect(got), vim.inspect(want)), 2)
  end
end
local function truthy(v, what)
  if not v then
    fail(what or 'expected a true value', 2)
  end
  return v
end
-- wait polls cond (which is re-checked on every event) until it holds.
local function wait(what, cond, ms)
  if not vim.wait(ms or 20000, cond, 10) then
    fail('timed out waiting for ' .. what, 2)
  end
end

---------------------------------------------------------------------------
-- Stubs: notifications are recorded, vim.ui.select answers from a handler.
---------------------------------------------------------------------------
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
local function noted(pattern, level, from)
  for i = from or 1, #notes do
    local n = notes[i]
    if n.msg:find(pattern) and (level == nil or n.level == level) then
      return n
    end
  end
end

local select_handler = nil
vim.ui.select = function(items, opts, on_choice)
  if not select_handler then
    error('unexpected vim.ui.select: ' .. tostring(opts.prompt))
  end
  select_handler(items, opts, on_choice)
end

-- confirm_handler answers vim.fn.confirm (1: the first choice); every
-- question asked is kept in confirmed.
local confirm_handler, confirmed = nil, {}
vim.fn.confirm = function(msg, choices, default, kind)
  table.insert(confirmed, { msg = msg, choices = choices, default = default, kind = kind })
  if not confirm_handler then
    error('unexpected vim.fn.confirm: ' .. tostring(msg))
  end
  return confirm_handler(msg, choices)
end

local hearth, rpc
local S -- hearth._state

-- Every message the plugin writes to the agent; intercept(msg) returning
-- true keeps one from being sent.
local sent, intercept = {}, nil

-- last_sent is the last request of method this editor sent since sent[from].
local function last_sent(method, from)
  local req
  for i = from, #sent do
    if sent[i].method == method then
      req = sent[i]
    end
  end
  return req
end

---------------------------------------------------------------------------
-- Processes: the simulator (a job of ours) and the daemon (auto-started by
-- `hearth acp`, killed by pid from _hearth/status).
---------------------------------------------------------------------------
local sim_job
local daemon_pids = {}

local function free_port()
  local srv = vim.loop.new_tcp()
  srv:bind('127.0.0.1', 0)
  local port = srv:getsockname().port
  srv:close()
  return port
end

local function start_sim()
  local port = free_port()
  sim_job = vim.fn.jobstart({ bin, 'sim', '--addr', '127.0.0.1:' .. port }, { stdout_buffered = true })
  assert(sim_job > 0, 'cannot start hearth sim')
  local probe = { busy = false, ok = false }
  wait('the simulator to accept connections', function()
    if probe.ok then
      return true
    end
    if not probe.busy then
      probe.busy = true
      local tcp = vim.loop.new_tcp()
      tcp:connect('127.0.0.1', port, function(err)
        probe.ok = err == nil
        probe.busy = false
        tcp:close()
      end)
    end
    return false
  end, 15000)
  return port
end


-- The model relay: a TCP proxy between the daemon and the simulator, run on
-- Neovim's loop. Armed with hold(pattern), it forwards the simulator's bytes
-- up to and including the first occurrence of pattern (so mid-way through a
-- WebSocket frame) and holds the rest until release(): the daemon has then
-- streamed part of an answer and is waiting for the model, which makes
-- "cancel mid-stream" and "daemon killed mid-turn" deterministic. (`hearth
-- sim` streams a whole answer in a few milliseconds and has no pacing flag.)
local relay = { pattern = nil, held = nil }

function relay.start(target)
  local server = vim.loop.new_tcp()
  assert(server:bind('127.0.0.1', 0))
  local port = server:getsockname().port
  assert(server:listen(64, function(err)
    if err then
      return
    end
    local down, up = vim.loop.new_tcp(), vim.loop.new_tcp()
    server:accept(down)
    local c = { down = down, up = up, queue = {}, connected = false, tail = '' }
    local function close()
      for _, h in ipairs({ down, up }) do
        if not h:is_closing() then
          h:close()
        end
      end
      if relay.held == c then
        relay.held = nil
      end
    end
    c.close = close
    c.on_up = function(rerr, data)
      if rerr or not data then
        return close()
      end
      if relay.pattern and relay.held == nil then
        -- search across the previous read's tail: the pattern may straddle reads
        local hay = c.tail .. data
        local _, e = hay:find(relay.pattern, 1, true)
        if e then
          local cut = e - #c.tail -- bytes of data up to the pattern's end
          down:write(data:sub(1, cut))
          c.rest = { data:sub(cut + 1) }
          relay.pattern = nil
          relay.held = c
          up:read_stop()
          return
        end
        c.tail = hay:sub(-32)
      end
      down:write(data)
    end
    up:connect('127.0.0.1', target, function(cerr)
      if cerr then
        return close()
      end
      c.connected = true
      for _, d in ipairs(c.queue) do
        up:write(d)
      end
      c.queue = {}
      up:read_start(c.on_up)
    end)
    down:read_start(function(rerr, data)
      if rerr or not data then
        return close()
      end
      if not c.upgraded then
        -- The daemon's WebSocket handshake: drop its offer of permessage-deflate
        -- so that the simulator's frames stay plain text the pattern can match.
        c.upgraded = data:find('\r\n\r\n', 1, true) ~= nil
        data = data:gsub('\r\n[Ss]ec%-[Ww]eb[Ss]ocket%-[Ee]xtensions:[^\r]*', '')
      end
      if c.connected then
        up:write(data)
      else
        table.insert(c.queue, data)
      end
    end)
  end))
  relay.server = server
  return port
end

function relay.hold(pattern)
  relay.pattern = pattern
  relay.held = nil
end

-- release forwards what was held and carries on (the daemon may have
-- closed that connection already: then it is dropped).
function relay.release()
  relay.pattern = nil
  local c = relay.held
  relay.held = nil
  if c and not c.down:is_closing() and not c.up:is_closing() then
    for _, d in ipairs(c.rest or {}) do
      c.down:write(d)
    end
    c.up:read_start(c.on_up)
  end
end

local function alive(pid)
  if not pid or vim.loop.kill(pid, 0) ~= 0 then
    return false
  end
  local f = io.open('/proc/' .. pid .. '/stat')
  if f then
    local stat = f:read('*l') or ''
    f:close()
    if stat:match('^%d+ %b() Z') then
      return false -- a zombie nobody reaped: gone as far as we care
    end
  end
  return true
end

-- status returns _hearth/status through the plugin.
local function status()
  local res, err
  hearth.status(function(e, st)
    err, res = e, st
    if st then
      daemon_pids[st.pid] = true
    end
  end)
  wait('_hearth/status', function()
    return res ~= nil or err ~= nil
  end)
  truthy(res, 'status failed: ' .. tostring(err))
  return res
end

local function cleanup()
  if hearth and S and S.client then
    pcall(status)
  end
  if hearth then
    hearth.stop()
  end
  for pid in pairs(daemon_pids) do
    if alive(pid) then
      vim.loop.kill(pid, 'sigterm')
      if not vim.wait(10000, function()
        return not alive(pid)
      end, 20) then
        vim.loop.kill(pid, 'sigkill')
      end
    end
  end
  if relay.server and not relay.server:is_closing() then
    relay.server:close()
  end
  for pid in pairs(daemon_pids) do
    if alive(pid) then
      error('daemon ' .. pid .. ' still running after cleanup')
    end
  end
  if sim_job then
    vim.fn.jobstop(sim_job)
    vim.fn.jobwait({ sim_job }, 5000)
  end
  os.remove(root .. '/doc/tags')
end

---------------------------------------------------------------------------
-- Helpers over the plugin
---------------------------------------------------------------------------
local turns_done = 0
local function chat_lines()
  local s = hearth.current_session()
  return s and s.chat:lines() or {}
end
local function find_line(lines, pattern, plain)
  for i, l in ipairs(lines) do
    if l:find(pattern, 1, plain) then
      return i
    end
  end
end
local function has_line(pattern)
  return find_line(chat_lines(), pattern, true) ~= nil
end
-- run sends :Hearth {text} and waits for the turn's answer.
local function run(text)
  local before = turns_done
  vim.cmd('Hearth ' .. text)
  wait('the answer to ' .. text, function()
    return turns_done > before
  end)
  return hearth.current_session()
end
local function last_line()
  local s = hearth.current_session()
  if not s or not s.chat.buf or not vim.api.nvim_buf_is_valid(s.chat.buf) then
    return ''
  end
  local n = vim.api.nvim_buf_line_count(s.chat.buf)
  return (vim.api.nvim_buf_get_lines(s.chat.buf, n - 1, n, false)[1] or '') .. s.chat.pending
end
-- feed_updates hands the plugin one batch of session/update notifications
-- for session sid, as if they came in one read of the agent's stdout.
local function feed_updates(sid, updates)
  local batch = {}
  for _, u in ipairs(updates) do
    table.insert(batch, rpc.json.encode({ jsonrpc = '2.0', method = 'session/update',
      params = { sessionId = sid, update = u } }))
  end
  table.insert(batch, '')
  S.client:feed(batch)
end
local function thought(text)
  return { sessionUpdate = 'agent_thought_chunk', content = { type = 'text', text = text } }
end
-- thought_text is the text of the thought block whose header is line i:
-- its body lines without their "  ┊ " prefix, and the index of the line
-- after the block.
local function thought_text(lines, i)
  local body = {}
  local j = i + 1
  while lines[j] and lines[j]:find('^  ┊') do
    table.insert(body, (lines[j]:gsub('^  ┊ ?', '', 1)))
    j = j + 1
  end
  return table.concat(body, '\n'), j
end
-- fold_of returns, in the chat window, where the closed fold holding line
-- lnum starts and ends (-1, -1 when it is open) and its fold text.
local function fold_of(lnum)
  local s = hearth.current_session()
  local win = truthy(s.chat:window(), 'chat window')
  local first, last, text
  vim.api.nvim_win_call(win, function()
    first, last = vim.fn.foldclosed(lnum), vim.fn.foldclosedend(lnum)
    text = vim.fn.foldtextresult(lnum)
  end)
  return first, last, text
end
-- last_turn returns the lines from the last "## You" block on.
local function last_turn(lines)
  local from = 1
  for i, l in ipairs(lines) do
    if l == '## You' then
      from = i
    end
  end
  return vim.list_slice(lines, from), from - 1
end
local function read(path)
  local f = assert(io.open(path))
  local s = f:read('*a')
  f:close()
  return s
end
local function write(path, s)
  local f = assert(io.open(path, 'w'))
  f:write(s)
  f:close()
end

---------------------------------------------------------------------------
local function main()
  local ws = tmp .. '/ws'
  vim.fn.mkdir(ws, 'p')
  write(ws .. '/a.txt', 'hello\n')
  write(ws .. '/perm.txt', 'original\n')
  local port = relay.start(start_sim())
  vim.env.HEARTH_SOCKET = tmp .. '/s.sock'
  vim.env.HEARTH_DATA_DIR = tmp .. '/data'
  vim.env.OPENAI_BASE_URL = 'http://127.0.0.1:' .. port .. '/v1'
  vim.env.OPENAI_API_KEY = nil
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))

  vim.cmd('runtime plugin/hearth.lua')
  hearth = require('hearth')
  rpc = require('hearth.rpc')
  S = hearth._state
  local orig_send = rpc.Client.send
  rpc.Client.send = function(self, msg)
    table.insert(sent, msg)
    if intercept and intercept(msg) then
      return true
    end
    return orig_send(self, msg)
  end
  local statuses = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'HearthUpdate',
    callback = function()
      statuses[hearth.statusline()] = true
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    pattern = 'HearthTurnDone',
    callback = function()
      turns_done = turns_done + 1
    end,
  })

  test('commands exist after loading plugin/hearth.lua', function()
    for _, c in ipairs({ 'Hearth', 'HearthNew', 'HearthResume', 'HearthCancel', 'HearthStatus', 'HearthMode', 'HearthModel', 'HearthEffort', 'HearthImage',
      'HearthQueue', 'HearthUndo', 'HearthRewind', 'HearthFork' }) do
      eq(vim.fn.exists(':' .. c), 2, ':' .. c)
    end
    -- lazy.nvim loads the plugin on the commands the README lists: all of them
    local listed = {}
    for name in read(root .. '/README.md'):match('cmd = (%b{})'):gmatch("'(Hearth%w*)'") do
      listed[name] = true
    end
    for name in pairs(vim.api.nvim_get_commands({})) do
      if name:match('^Hearth') then
        truthy(listed[name], "README's lazy.nvim cmd list lacks " .. name)
      end
    end
  end)

  test('rpc: lines split across on_stdout chunks are reassembled', function()
    local got, errors = {}, {}
    local c = rpc.new({
      cmd = { 'true' },
      on_notification = function(method, params)
        table.insert(got, { method, params })
      end,
      on_error = function(msg)
        table.insert(errors, msg)
      end,
    })
    local line1 = '{"jsonrpc":"2.0","method":"m1","params":{"text":"héllo"}}'
    local line2 = '{"jsonrpc":"2.0","method":"m2","params":{"n":2}}'
    -- split inside the two-byte é, then a chunk that ends one line and
    -- carries a whole second one plus the start of garbage
    local cut = line1:find('é', 1, true)
    c:feed({ line1:sub(1, cut) })
    eq(#got, 0, 'messages before the newline')
    c:feed({ line1:sub(cut + 1), line2, 'not js' })
    eq(#got, 2, 'messages after the newline')
    eq(got[1][1], 'm1')
    eq(got[1][2].text, 'héllo')
    eq(got[2][2].n, 2)
    eq(#errors, 0, 'errors so far')
    c:feed({ 'on\r', '' })
    eq(#errors, 1, 'a bad line is reported')
    truthy(errors[1]:find('bad message', 1, true), errors[1])
    eq(#got, 2, 'no message from the bad line')
  end)

  test('statusline is off before the first command; a missing binary is a clear error', function()
    eq(hearth.statusline(), 'hearth: off')
    local cmd = hearth.config.cmd
    hearth.setup({ cmd = { tmp .. '/no-such-hearth', 'acp' } })
    local from = #notes + 1
    vim.cmd('Hearth hello')
    truthy(noted('cannot start the agent', vim.log.levels.ERROR, from), 'no error notification: ' .. vim.inspect(notes))
    eq(hearth.statusline(), 'hearth: off')
    hearth.setup({ cmd = cmd })
  end)

  hearth.setup({ cmd = { bin, 'acp' } })

  local sid1
  test(':Hearth streams the answer into a chat buffer; statusline follows', function()
    statuses = {}
    vim.cmd('Hearth hello there')
    eq(hearth.statusline(), 'hearth: starting', 'statusline right after :Hearth')
    wait('the first answer', function()
      return turns_done >= 1
    end)
    local s = hearth.current_session()
    sid1 = s.id
    truthy(sid1:match('^ses_'), 'session id ' .. sid1)
    eq(s.last_stop, 'end_turn', 'stop reason')
    local lines = chat_lines()
    eq(lines[1], '## You')
    eq(lines[2], 'hello there')
    truthy(find_line(lines, '## hearth', true), 'agent header')
    truthy(find_line(lines, 'You said: hello there', true), 'answer in the buffer: ' .. vim.inspect(lines))
    truthy(s.chat:window(), 'the chat buffer is shown in a window')
    eq(vim.api.nvim_buf_get_name(s.chat.buf), 'hearth://' .. sid1, 'buffer name')
    truthy(statuses['hearth: streaming'], 'statusline showed streaming: ' .. vim.inspect(statuses))
    eq(hearth.statusline(), 'hearth: ready')
    -- a prompt while the turn runs steers it: no second session/prompt
    local from = #sent + 1
    local before = turns_done
    local outcome
    vim.cmd('Hearth one')
    hearth.prompt('two', function(o)
      outcome = o
    end)
    wait('the first of two prompts, and the steer', function()
      return turns_done > before and outcome ~= nil and has_line('You said: two')
    end)
    truthy(outcome == 'injected' or outcome == 'startedNewTurn', 'steering outcome ' .. tostring(outcome))
    truthy(has_line('You said: one'), 'the first prompt answered')
    truthy(last_sent('_session/steering', from), 'the second prompt steered')
    local prompts = 0
    for i = from, #sent do
      prompts = prompts + (sent[i].method == 'session/prompt' and 1 or 0)
    end
    eq(prompts, 1, 'session/prompt requests')
    -- a second prompt reuses the same buffer
    local buf = s.chat.buf
    run('second message')
    eq(hearth.current_session().chat.buf, buf, 'same buffer')
    truthy(has_line('You said: second message'), 'second answer')
  end)

  test('a tool call is a header line with its output folded beneath it', function()
    local s = run('read a.txt')
    eq(s.last_stop, 'end_turn')
    local lines = chat_lines()
    local i = find_line(lines, '⏺ Read a.txt [completed]', true)
    truthy(i, 'tool header (the title the daemon gave the call) in ' .. vim.inspect(lines))
    eq(find_line(lines, '⏺ read_file', true), nil, 'the raw tool name is not left in a header')
    eq(lines[i + 1], '  │      1\thello', 'tool output line')
    truthy(find_line(lines, 'I called read_file 1 time(s). Last result:', true), 'answer after the tool')
    local win = truthy(s.chat:window(), 'chat window')
    vim.api.nvim_win_call(win, function()
      eq(vim.fn.foldclosed(i + 1), i + 1, 'output line is in a closed fold')
      eq(vim.fn.foldclosed(i), -1, 'header is not folded')
      eq(vim.fn.foldlevel(i + 1), 1, 'fold level of the output')
    end)
  end)

  test("a tool header shows the agent's title, its controls escaped, and the status", function()
    local s = hearth.current_session()
    local function header(id)
      local t = s.chat.tools[id]
      local pos = vim.api.nvim_buf_get_extmark_by_id(s.chat.buf, require('hearth.chat').ns, t.mark, {})
      return vim.api.nvim_buf_get_lines(s.chat.buf, pos[1], pos[1] + 1, false)[1]
    end
    -- hearth's tool_call is titled with the tool's name until the call is
    -- previewed or has run: its argument says what it works on meanwhile
    feed_updates(s.id, { { sessionUpdate = 'tool_call', toolCallId = 'call_title_1', title = 'shell',
      kind = 'execute', status = 'pending' } })
    eq(header('call_title_1'), '⏺ shell [pending]', 'a new call')
    feed_updates(s.id, { { sessionUpdate = 'tool_call_update', toolCallId = 'call_title_1', status = 'in_progress',
      rawInput = { command = 'go test ./...' } } })
    eq(header('call_title_1'), '⏺ shell go test ./... [in_progress]', 'before the agent titles it')
    feed_updates(s.id, { { sessionUpdate = 'tool_call_update', toolCallId = 'call_title_1',
      title = 'Run `go test ./...\r\27[2K`', status = 'completed',
      content = { { type = 'content', content = { type = 'text', text = 'ok\n' } } } } })
    eq(header('call_title_1'), '⏺ Run `go test ./...\\r\\x1b[2K` [completed]', 'the title, its controls escaped')
    -- a tool_call that has its title from the start keeps it
    feed_updates(s.id, { { sessionUpdate = 'tool_call', toolCallId = 'call_title_2', title = 'Read README.md',
      kind = 'read', status = 'pending', rawInput = { path = 'README.md' } } })
    eq(header('call_title_2'), '⏺ Read README.md [pending]', 'a titled call')
    feed_updates(s.id, { { sessionUpdate = 'tool_call_update', toolCallId = 'call_title_2', status = 'failed' } })
    eq(header('call_title_2'), '⏺ Read README.md [failed]', 'the status follows')
    s.chat:end_message()
  end)

  test(':HearthImage attaches an image to the next prompt; the model sees it, the chat names it', function()
    local png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    vim.fn.system({ 'sh', '-c', 'printf %s "$1" | base64 -d > shot.png', 'sh', png })
    eq(vim.v.shell_error, 0, 'writing shot.png')
    eq(require('hearth.image').base64(read('shot.png')), png, 'the Lua base64 encoder')
    -- what is not an image, or not there, is refused at once
    local from = #notes + 1
    vim.cmd('HearthImage a.txt')
    truthy(noted('a%.txt is not a PNG, JPEG, GIF or WebP image', vim.log.levels.ERROR, from), vim.inspect(notes))
    vim.cmd('HearthImage no-such.png')
    truthy(noted('cannot read no%-such.png', vim.log.levels.ERROR, from), vim.inspect(notes))
    eq(#S.images, 0, 'nothing attached')

    vim.cmd('HearthImage shot.png')
    truthy(noted('shot%.png attached to the next prompt %(70 B%)', nil, from), vim.inspect(notes))
    local n = #sent
    local s = run('what is this')
    eq(s.last_stop, 'end_turn')
    local req
    for i = n + 1, #sent do
      if sent[i].method == 'session/prompt' then
        req = sent[i]
      end
    end
    local blocks = truthy(req, 'a session/prompt was sent').params.prompt
    eq(#blocks, 2, 'text and image blocks')
    eq(blocks[1].text, 'what is this')
    eq(blocks[2].type, 'image')
    eq(blocks[2].mimeType, 'image/png')
    eq(blocks[2].data, png)
    local lines = last_turn(chat_lines())
    eq(lines[2], 'what is this')
    eq(lines[3], '[image: shot.png, PNG, 70 B]')
    truthy(has_line('[saw 1 image: image/png 1x1 (70 bytes)]'), 'the model saw the image: ' .. vim.inspect(lines))
    eq(#S.images, 0, 'the image went with that prompt only')

    -- an image alone is a prompt too
    vim.cmd('HearthImage shot.png')
    local before = turns_done
    vim.cmd('Hearth')
    wait('the answer to an image', function()
      return turns_done > before
    end)
    lines = last_turn(chat_lines())
    eq(lines[2], '[image: shot.png, PNG, 70 B]')
    truthy(find_line(lines, '[saw 1 image: image/png 1x1 (70 bytes)]', true), vim.inspect(lines))

    -- read_file of an image: the model sees it, the tool output names it
    run('read shot.png')
    lines = last_turn(chat_lines())
    truthy(find_line(lines, '⏺ Read shot.png [completed]', true), vim.inspect(lines))
    truthy(find_line(lines, '  │ ' .. '[image: PNG, 70 B]', true), 'the tool result names the image: ' .. vim.inspect(lines))
    truthy(find_line(lines, '[saw 1 image: image/png 1x1 (70 bytes)]', true), vim.inspect(lines))
  end)

  -- the agent's view of files goes through the buffers (fs/read_text_file, fs/write_text_file)
  local function fs_replies(from, key)
    local out = {}
    for i = from, #sent do
      local m = sent[i]
      if m.method == nil and m.id ~= nil and (m.error ~= nil or (type(m.result) == 'table' and (key == nil or m.result[key] ~= nil))) then
        table.insert(out, m)
      end
    end
    return out
  end

  test('initialize advertised the fs capabilities', function()
    local init
    for _, m in ipairs(sent) do
      if m.method == 'initialize' then
        init = m
      end
    end
    truthy(init, 'initialize was sent')
    eq(init.params.clientCapabilities.fs.readTextFile, true, 'readTextFile')
    eq(init.params.clientCapabilities.fs.writeTextFile, true, 'writeTextFile')
  end)

  test("read_file returns a buffer's unsaved text, not the disk's", function()
    write(ws .. '/buf.txt', 'on disk\n')
    local b = vim.fn.bufadd(ws .. '/buf.txt')
    vim.fn.bufload(b)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { 'unsaved line', 'second' })
    eq(vim.bo[b].modified, true, 'the buffer is modified')
    local from = #sent + 1
    run('r sim:calls=1 sim:tool=read_file sim:args={"path":"buf.txt"}')
    local lines = last_turn(chat_lines())
    truthy(find_line(lines, '  │      1\tunsaved line', true), 'the unsaved line in ' .. vim.inspect(lines))
    truthy(find_line(lines, '  │      2\tsecond', true), 'the second line in ' .. vim.inspect(lines))
    eq(find_line(lines, 'on disk', true), nil, 'the disk text is not shown')
    local replies = fs_replies(from, 'content')
    eq(#replies, 1, 'fs/read_text_file replies')
    eq(replies[1].result.content, 'unsaved line\nsecond\n', 'the text sent')
    eq(read(ws .. '/buf.txt'), 'on disk\n', 'the disk is untouched')
  end)

  test('an edit by the agent lands in the buffer, unsaved', function()
    local asked = 0
    select_handler = function(items, opts, on_choice)
      asked = asked + 1
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    -- a loaded, modified buffer: the edit matches its unsaved text
    local b = vim.fn.bufnr(ws .. '/buf.txt')
    run('e sim:calls=1 sim:tool=edit_file sim:args={"path":"buf.txt","old_string":"unsaved","new_string":"edited"}')
    eq(asked, 1, 'permission questions')
    eq(table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '|'), 'edited line|second', 'buffer lines')
    eq(vim.bo[b].modified, true, 'still unsaved')
    eq(read(ws .. '/buf.txt'), 'on disk\n', 'the disk is untouched')
    truthy(find_line(last_turn(chat_lines()), "in the user's editor, unsaved", true), 'the agent is told the change is unsaved')
    -- a file not loaded: its buffer is loaded and changed, not saved
    write(ws .. '/edit.txt', 'one\ntwo\nthree\n')
    eq(vim.fn.bufloaded(ws .. '/edit.txt'), 0, 'edit.txt is not loaded yet')
    run('e sim:calls=1 sim:tool=edit_file sim:args={"path":"edit.txt","old_string":"two","new_string":"TWO"}')
    eq(asked, 2, 'permission questions')
    local e = vim.fn.bufnr(ws .. '/edit.txt')
    truthy(e > 0 and vim.api.nvim_buf_is_loaded(e), 'edit.txt is loaded')
    eq(table.concat(vim.api.nvim_buf_get_lines(e, 0, -1, false), '|'), 'one|TWO|three', 'edit.txt lines')
    eq(vim.bo[e].modified, true, 'edit.txt is unsaved')
    eq(vim.bo[e].buflisted, true, 'edit.txt is listed')
    eq(read(ws .. '/edit.txt'), 'one\ntwo\nthree\n', 'the disk is untouched')
    -- saving writes exactly what the agent wrote
    vim.api.nvim_buf_call(e, function()
      vim.cmd('silent write')
    end)
    eq(read(ws .. '/edit.txt'), 'one\nTWO\nthree\n', 'edit.txt after :write')
    select_handler = nil
  end)

  test('a new file is created by the editor, with its directories, and its buffer loaded', function()
    local path = ws .. '/made/by/hearth.txt'
    eq(vim.fn.isdirectory(ws .. '/made'), 0, 'made/ does not exist yet')
    select_handler = function(items, opts, on_choice)
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    local from = #sent + 1
    run('w sim:calls=1 sim:tool=write_file sim:args={"path":"made/by/hearth.txt","content":"new\\nfile\\n"}')
    select_handler = nil
    eq(read(path), 'new\nfile\n', 'the file on disk')
    local b = vim.fn.bufnr(path)
    truthy(b > 0 and vim.api.nvim_buf_is_loaded(b), 'its buffer is loaded')
    eq(table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '|'), 'new|file', 'its lines')
    eq(vim.bo[b].modified, false, 'it is saved as written')
    eq(vim.bo[b].buflisted, true, 'it is listed')
    local replies = fs_replies(from)
    truthy(#replies >= 1 and replies[#replies].error == nil, 'fs/write_text_file answered: ' .. vim.inspect(replies))
  end)

  test('fs requests: line and limit, text without a final newline, bad params', function()
    local files = require('hearth.files')
    write(ws .. '/noeol.txt', 'x\n')
    local res, err = files.write({ path = ws .. '/noeol.txt', content = 'a\nb\nc' })
    eq(err, nil, 'write error')
    res = files.read({ path = ws .. '/noeol.txt' })
    eq(res.content, 'a\nb\nc', 'read back from the buffer')
    eq(files.read({ path = ws .. '/noeol.txt', line = 2, limit = 1 }).content, 'b', 'line 2, limit 1')
    vim.api.nvim_buf_call(vim.fn.bufnr(ws .. '/noeol.txt'), function()
      vim.cmd('silent write')
    end)
    eq(read(ws .. '/noeol.txt'), 'a\nb\nc', 'saved without a final newline')
    res, err = files.read({ path = 'relative.txt' })
    eq(res, nil, 'a relative path is refused')
    eq(err.code, -32602, 'error code')
    res, err = files.read({ path = ws .. '/missing.txt' })
    eq(err.code, -32002, 'a missing file')
  end)

  test('thought chunks: one closed fold per thought, before what follows, exact text', function()
    local s = hearth.current_session()
    local first = { '**Reading', ' the file**\n\nThe user wants', ' a.txt; I', ' should read it first.' }
    local second = { 'It says', ' hello; ', 'answer now.' }
    local base = #chat_lines()
    -- the first chunks: a thought still streaming
    feed_updates(s.id, { thought(first[1]), thought(first[2]) })
    local lines = chat_lines()
    local h = base + truthy(find_line(vim.list_slice(lines, base + 1), '^✻ '), 'a thought header in ' .. vim.inspect(lines))
    eq(lines[h], '✻ Thinking…', 'header while the thought streams')
    eq(thought_text(lines, h), first[1] .. first[2], 'the text so far')
    eq(fold_of(h), h, 'the streaming thought is folded')
    -- the rest, a tool call, a second thought and the answer
    feed_updates(s.id, {
      thought(first[3]), thought(first[4]),
      { sessionUpdate = 'tool_call', toolCallId = 'call_think_1', title = 'read_file', status = 'completed',
        rawInput = { path = 'a.txt' } },
      thought(second[1]), thought(second[2]), thought(second[3]),
      { sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'The file says hello.' } },
    })
    lines = chat_lines()
    eq(lines[h], '✻ Thought: Reading the file', 'header of the finished thought')
    local text, after = thought_text(lines, h)
    eq(text, table.concat(first), 'the first thought, all its chunks in one block')
    eq(after, h + 4, 'line after the first thought')
    eq(lines[after], '⏺ read_file a.txt [completed]', 'the tool call follows the first thought')
    local h2 = after + 1
    eq(lines[h2], '✻ Thought: It says hello; answer now.', 'the second thought starts a block of its own')
    local text2, after2 = thought_text(lines, h2)
    eq(text2, table.concat(second), 'the second thought')
    eq(lines[after2], 'The file says hello.', 'the answer follows the second thought')
    eq(after2, #lines, 'the answer ends the buffer')
    -- folded by default: the closed fold shows the header
    local f1, l1, t1 = fold_of(h)
    eq(f1, h, 'first thought: fold start')
    eq(l1, h + 3, 'first thought: fold end')
    eq(t1, '✻ Thought: Reading the file (3 lines)', 'fold text')
    local f2, l2 = fold_of(h2 + 1)
    eq(f2, h2, 'second thought: fold start')
    eq(l2, h2 + 1, 'second thought: fold end')
    eq(fold_of(after), -1, 'the tool header is not folded')
    eq(fold_of(after2), -1, 'the answer is not folded')
    -- zo shows the whole text
    vim.api.nvim_win_call(s.chat:window(), function()
      vim.api.nvim_win_set_cursor(0, { h, 0 })
      vim.cmd('normal! zo')
    end)
    eq(fold_of(h + 2), -1, 'zo opens the thought')
    eq(fold_of(h2), h2, 'the other thought stays closed')
    -- highlighted as hearthThought, linked to Comment
    vim.cmd('syntax on')
    vim.api.nvim_buf_call(s.chat.buf, function()
      vim.bo.syntax = 'hearth' -- what syntax on does for the filetype when filetype detection is on
      for _, lnum in ipairs({ h, h + 1, h + 3 }) do
        local id = vim.fn.synID(lnum, 1, 1)
        eq(vim.fn.synIDattr(id, 'name'), 'hearthThought', 'syntax of line ' .. lnum)
        eq(vim.fn.synIDattr(vim.fn.synIDtrans(id), 'name'), 'Comment', 'highlight of line ' .. lnum)
      end
    end)
    s.chat:end_message()
  end)

  test('a real prompt: the model thought first, its thought folded above the answer', function()
    run('think about it')
    local lines, base = last_turn(chat_lines())
    local h = find_line(lines, '^✻ ')
    local a = truthy(find_line(lines, 'You said: think about it', true), 'the answer in ' .. vim.inspect(lines))
    truthy(h, 'a thought in ' .. vim.inspect(lines))
    truthy(h < a, 'the thought comes before the answer')
    truthy(lines[h]:find('^✻ Thought'), 'finished header: ' .. lines[h])
    local text = thought_text(lines, h)
    truthy(text:find('%S'), 'the thought has text')
    eq(fold_of(base + h), base + h, 'the thought is folded')
  end)

  test(':HearthRules lists the rule an "Always allow" kept, and revokes it: the command asks again', function()
    local asked, answer = 0, 'allow_always'
    select_handler = function(items, opts, on_choice)
      asked = asked + 1
      for _, o in ipairs(items) do
        if o.kind == answer then
          return on_choice(o)
        end
      end
    end
    local prompt = 'm sim:calls=1 sim:tool=shell sim:args={"command":"mkdir\\u0020-p\\u0020ruled"}'
    run(prompt)
    eq(asked, 1, 'permission questions')
    run(prompt)
    eq(asked, 1, 'permission questions once the rule is kept')
    local from = #notes + 1
    local res
    vim.cmd('HearthRules')
    hearth.rules('', function(_, r)
      res = r
    end)
    wait('_hearth/rules', function()
      return res ~= nil
    end)
    local rule
    for _, r in ipairs(res.rules) do
      if r.pattern == 'mkdir' and r.kind == 'command' then
        rule = r
      end
    end
    truthy(rule, 'the mkdir rule in ' .. vim.inspect(res.rules))
    truthy(noted('mkdir', nil, from), ':HearthRules shows it')
    local revoked
    hearth.rules('revoke ' .. rule.id, function(_, r)
      revoked = r
    end)
    wait('_hearth/rules/revoke', function()
      return revoked ~= nil
    end)
    eq(revoked.revoked, 1, 'rules revoked')
    answer = 'allow_once'
    run(prompt)
    eq(asked, 2, 'permission questions after the revoke')
    select_handler = nil
  end)

  test(':HearthProcesses lists the process exec_command left running; kill ends it and everything it started', function()
    -- pids whose command line is `sleep 3017` (run by a shell, maybe in a sandbox)
    local function sleepers()
      local pids = {}
      for _, pid in ipairs(vim.fn.readdir('/proc')) do
        if pid:match('^%d+$') then
          local f = io.open('/proc/' .. pid .. '/cmdline')
          local cmdline = f and f:read('*a') or ''
          if f then
            f:close()
          end
          local hit = cmdline:find('sleep\0003017', 1, true) or cmdline:find('sleep 3017', 1, true)
          if hit and alive(tonumber(pid)) then
            table.insert(pids, pid)
          end
        end
      end
      return pids
    end
    select_handler = function(items, _, on_choice)
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    run([=[p sim:steps=[["exec_command",{"cmd":"sleep\u00203017","yield_time_ms":300}]]]=])
    select_handler = nil
    local function list(args)
      local res, err
      hearth.processes(args, function(e, r)
        err, res = e, r
      end)
      wait('_hearth/processes ' .. args, function()
        return res ~= nil or err ~= nil
      end)
      truthy(res, ':HearthProcesses ' .. args .. ' failed: ' .. tostring(err))
      return res
    end
    local from = #notes + 1
    local res = list('')
    local proc
    for _, p in ipairs(res.processes) do
      if p.command:find('sleep 3017', 1, true) then
        proc = p
      end
    end
    truthy(proc, 'the sleep in ' .. vim.inspect(res.processes) .. '; the chat: ' .. vim.inspect((last_turn(chat_lines()))))
    eq(proc.running, true, 'running')
    truthy(noted(proc.processId .. '  running  %d+s  [^\n]*sleep 3017', nil, from), ':HearthProcesses shows it: ' .. vim.inspect(notes[#notes]))
    truthy(#sleepers() > 0, 'a sleep 3017 process before the kill')

    from = #notes + 1
    local killed = list('kill ' .. proc.processId)
    eq(killed.killed, true, 'killed')
    truthy(noted('ended process ' .. proc.processId, nil, from), 'the kill is reported')
    eq(#sleepers(), 0, 'sleep 3017 processes after the kill')

    from = #notes + 1
    res = list('')
    for _, p in ipairs(res.processes) do
      truthy(not p.command:find('sleep 3017', 1, true), 'still listed: ' .. vim.inspect(p))
    end
    if #res.processes == 0 then
      truthy(noted('no processes', nil, from), ':HearthProcesses says none are left')
    end

    from = #notes + 1
    vim.cmd('HearthProcesses kill ' .. proc.processId)
    wait('the failed kill', function()
      return noted('kill failed', vim.log.levels.ERROR, from) ~= nil
    end)
  end)

  test(':HearthStatus shows the daemon and the workspace, wrapped at words, sizes as the CLI prints them', function()
    local columns = vim.o.columns
    vim.o.columns = 72
    local from = #notes + 1
    vim.cmd('HearthStatus')
    wait('the status notification', function()
      return noted('pid %d+', nil, from) ~= nil
    end)
    vim.o.columns = columns
    local msg = noted('pid %d+', nil, from).msg
    local root = vim.loop.fs_realpath(tmp .. '/ws')
    for _, l in ipairs(vim.split(msg, '\n', { plain = true })) do
      truthy(vim.fn.strdisplaywidth(l) < 72, 'a line wider than the screen: ' .. vim.inspect(l))
    end
    -- a wrapped line goes on indented; joined again, no word was cut
    local joined = msg:gsub('\n    ', ' ')
    truthy(joined:find(root .. ': ', 1, true), 'workspace in ' .. msg)
    local st = status()
    local w
    for _, x in ipairs(st.workspaces) do
      if x.root == root then
        w = x
      end
    end
    truthy(w, 'the workspace in _hearth/status')
    truthy(w.bytesSent >= 1024, 'enough sent to need a unit: ' .. tostring(w.bytesSent))
    -- cmd/hearth/status.go's bytesHuman
    local function cli(n)
      if n >= 1024 * 1024 then
        return string.format('%.1f MiB', n / 1024 / 1024)
      elseif n >= 1024 then
        return string.format('%.1f KiB', n / 1024)
      end
      return string.format('%d B', n)
    end
    local want = string.format('%d full / %d incremental request(s), %s sent, %s saved',
      w.fullRequests, w.incrementalRequests, cli(w.bytesSent), cli(w.bytesSaved))
    truthy(joined:find(want, 1, true), vim.inspect(want) .. ' in ' .. msg)
    eq(msg:find(' [KM]B'), nil, 'KB or MB in ' .. msg)
  end)

  test(':HearthCancel stops a streaming answer', function()
    relay.hold('tok2') -- the daemon gets "tok0 tok1", then the model stalls
    vim.cmd('Hearth count sim:tokens=15000')
    local s = hearth.current_session()
    local before = turns_done
    wait('the start of the answer', function()
      return relay.held ~= nil and last_line() == 'tok0 tok1'
    end)
    eq(hearth.statusline(), 'hearth: streaming')
    truthy(s.turn, 'the turn is running')
    vim.cmd('HearthCancel')
    wait('the turn to end', function()
      return turns_done > before
    end)
    relay.release()
    eq(s.last_stop, 'cancelled', 'stop reason')
    local lines = chat_lines()
    eq(lines[#lines], '⏹ cancelled', 'last line')
    eq(lines[#lines - 1], 'tok0 tok1', 'the answer stopped where the stream was cancelled')
    eq(hearth.statusline(), 'hearth: ready')
    -- nothing more of that answer arrives; the session goes on
    run('after the cancel')
    lines = chat_lines()
    local at = find_line(lines, '⏹ cancelled', true)
    eq(lines[at - 1], 'tok0 tok1', 'the cancelled answer got nothing more')
    eq(find_line(lines, 'tok2', true), nil, 'tok2 never shown')
    truthy(find_line(lines, 'You said: after the cancel', true), 'next answer')
  end)

  test('the chat buffer: <C-c> cancels its turn, q closes its window', function()
    relay.hold('tok2')
    vim.cmd('Hearth count sim:tokens=15000')
    local s = hearth.current_session()
    local before = turns_done
    wait('the start of the answer', function()
      return relay.held ~= nil and last_line() == 'tok0 tok1'
    end)
    local win = truthy(s.chat:window(), 'a window shows the chat')
    local from = vim.api.nvim_get_current_win()
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-c>', true, false, true), 'x', false)
    wait('the turn to end', function()
      return turns_done > before
    end)
    relay.release()
    eq(s.last_stop, 'cancelled', 'stop reason after <C-c> in the chat')
    vim.api.nvim_feedkeys('q', 'x', false)
    eq(vim.api.nvim_win_is_valid(win), false, 'the chat window after q')
    if vim.api.nvim_win_is_valid(from) then
      vim.api.nvim_set_current_win(from)
    end
    s.chat:show(hearth.config.open)
  end)

  test(':HearthCancel while a command runs: the call shows [cancelled], an earlier failure [failed]', function()
    local function exists(name)
      return vim.loop.fs_stat(ws .. '/' .. name) ~= nil
    end
    os.remove(ws .. '/cx1')
    os.remove(ws .. '/cx2')
    select_handler = function(items, opts, on_choice)
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    -- the first call fails on its own (exit 3); the second runs until cancelled
    local cmd = 'if test -e cx1; then touch cx2; sleep 60; else touch cx1; exit 3; fi'
    local before = turns_done
    vim.cmd('Hearth c sim:calls=2 sim:tool=shell sim:args=' .. rpc.json.encode({ command = cmd }):gsub(' ', '\\u0020'))
    local s = hearth.current_session()
    -- no event says the command started: its file appearing is the sign
    wait('the second command to run', function()
      return exists('cx2')
    end)
    vim.cmd('HearthCancel')
    wait('the turn to end', function()
      return turns_done > before
    end)
    select_handler = nil
    eq(s.last_stop, 'cancelled', 'stop reason')
    local lines = last_turn(chat_lines())
    local title = '⏺ Run ' .. cmd
    local first = find_line(lines, title .. ' [failed]', true)
    truthy(first, 'the call that failed before the cancel says so in ' .. vim.inspect(lines))
    local second = find_line(lines, title .. ' [cancelled]', true)
    truthy(second and second > first, 'the cancelled call says [cancelled] in ' .. vim.inspect(lines))
    eq(lines[#lines], '⏹ cancelled', 'last line')
  end)

  local perm_path = 'none'
  test('permission rejected: the file is unchanged and the reply says reject', function()
    local asked
    select_handler = function(items, opts, on_choice)
      eq(opts.kind, 'hearth_permission', 'select kind')
      asked = { items = items, prompt = opts.prompt, status = hearth.statusline() }
      for _, o in ipairs(items) do
        if o.kind == 'reject_once' then
          return on_choice(o)
        end
      end
      fail('no reject_once option in ' .. vim.inspect(items))
    end
    local from = #sent + 1
    local s = run('please change it sim:calls=1 sim:tool=write_file sim:args={"path":"perm.txt","content":"changed\\n"}')
    truthy(s.last_stop, 'turn ended')
    eq(read(tmp .. '/ws/perm.txt'), 'original\n', 'perm.txt after the turn')
    if asked then
      perm_path = 'daemon'
      eq(asked.status, 'hearth: waiting', 'statusline while asking')
      local reply
      for i = from, #sent do
        local m = sent[i]
        if m.result and type(m.result) == 'table' and m.result.outcome then
          reply = m
        end
      end
      truthy(reply, 'a permission reply was written')
      eq(reply.result.outcome.outcome, 'selected')
      local rejected
      for _, o in ipairs(asked.items) do
        if o.optionId == reply.result.outcome.optionId then
          rejected = o
        end
      end
      eq(rejected and rejected.kind, 'reject_once', 'the chosen option')
    else
      -- The daemon does not send session/request_permission yet: feed the
      -- request through the plugin's message handler and check the reply.
      perm_path = 'injected'
      local replies = {}
      intercept = function(msg)
        if msg.id == 'perm-test-1' and msg.method == nil then
          table.insert(replies, rpc.json.encode(msg))
          return true
        end
      end
      local req = {
        jsonrpc = '2.0',
        id = 'perm-test-1',
        method = 'session/request_permission',
        params = {
          sessionId = s.id,
          toolCall = {
            toolCallId = 'call_perm_1',
            title = 'write_file',
            kind = 'edit',
            status = 'pending',
            rawInput = { path = 'perm.txt', content = 'changed\n' },
          },
          options = {
            { optionId = 'allow-once', name = 'Allow', kind = 'allow_once' },
            { optionId = 'allow-always', name = 'Always allow', kind = 'allow_always' },
            { optionId = 'reject-once', name = 'Reject', kind = 'reject_once' },
            { optionId = 'reject-always', name = 'Never allow', kind = 'reject_always' },
          },
        },
      }
      S.client:handle_line(rpc.json.encode(req))
      wait('the permission reply', function()
        return #replies > 0
      end, 5000)
      intercept = nil
      truthy(asked, 'vim.ui.select was shown')
      eq(#asked.items, 4, 'options offered')
      truthy(asked.prompt:find('write_file perm.txt', 1, true), 'prompt names the call: ' .. asked.prompt)
      eq(asked.status, 'hearth: waiting', 'statusline while asking')
      eq(#replies, 1, 'one reply')
      local reply = rpc.json.decode(replies[1])
      eq(reply.jsonrpc, '2.0')
      eq(reply.id, 'perm-test-1')
      eq(reply.error, nil, 'error')
      eq(reply.result.outcome.outcome, 'selected')
      eq(reply.result.outcome.optionId, 'reject-once')
      truthy(has_line('⏺ write_file perm.txt [pending]'), 'the call is shown in the chat')
      eq(read(tmp .. '/ws/perm.txt'), 'original\n', 'perm.txt after the reply')
    end
    eq(hearth.statusline(), 'hearth: ready')
    select_handler = nil
  end)

  test('the permission question is asked with the diff in view, not in a closed fold', function()
    write(ws .. '/fold.txt', 'one\ntwo\nthree\n')
    local asked
    select_handler = function(items, opts, on_choice)
      local lines = chat_lines()
      asked = { prompt = opts.prompt, lines = lines, folds = {} }
      for i, l in ipairs(lines) do
        if l:find('^  │') then
          asked.folds[i] = fold_of(i)
        end
      end
      local h = find_line(lines, '⏺ Edit fold.txt [pending]', true)
      if h then
        asked.header = h
        local i = h + 1
        while lines[i] and lines[i]:find('^  │') do
          i = i + 1
        end
        asked.last = i - 1
      end
      for _, o in ipairs(items) do
        if o.kind == 'reject_once' then
          return on_choice(o)
        end
      end
    end
    run('e sim:calls=1 sim:tool=edit_file sim:args={"path":"fold.txt","old_string":"two","new_string":"TWO"}')
    select_handler = nil
    truthy(asked, 'the question was asked')
    local turn_lines, at = last_turn(asked.lines)
    local minus = at + truthy(find_line(turn_lines, '  │ - two', true), 'the diff in ' .. vim.inspect(turn_lines))
    local plus = at + truthy(find_line(turn_lines, '  │ + TWO', true), 'the diff in ' .. vim.inspect(turn_lines))
    truthy(find_line(turn_lines, '  │ @@ -1,3 +1,3 @@', true), 'the hunk header in ' .. vim.inspect(turn_lines))
    truthy(find_line(turn_lines, '  │   one', true), 'an unchanged line as context in ' .. vim.inspect(turn_lines))
    eq(find_line(turn_lines, '  │ - one', true), nil, 'an unchanged line marked removed')
    eq(find_line(turn_lines, '  │ + one', true), nil, 'an unchanged line marked added')
    eq(asked.folds[minus], -1, 'the removed line folded while asked')
    eq(asked.folds[plus], -1, 'the added line folded while asked')
    truthy(asked.header, 'the call, titled, in ' .. vim.inspect(asked.lines))
    truthy(minus > asked.header and plus <= asked.last, 'the diff under the call in ' .. vim.inspect(asked.lines))
    for i = asked.header + 1, asked.last do
      eq(asked.folds[i], -1, 'line ' .. i .. ' (' .. asked.lines[i] .. ') folded while asked')
    end
    eq(asked.prompt, 'hearth: allow Edit fold.txt?', 'the question')
    eq(read(ws .. '/fold.txt'), 'one\ntwo\nthree\n', 'fold.txt after the rejection')
    -- answered, the call's output folds again, and what came after it is
    -- folded as always
    local lines, base = last_turn(chat_lines())
    local h = truthy(find_line(lines, '⏺ Edit fold.txt [failed]', true), 'the rejected call in ' .. vim.inspect(lines))
    eq(fold_of(base + h + 1), base + h + 1, 'the rejected call\'s output is folded again')
    local th = truthy(find_line(vim.list_slice(lines, h + 1), '^✻ '), 'a thought after the call in ' .. vim.inspect(lines))
    eq(fold_of(base + h + th), base + h + th, 'the thought after the call is folded')
  end)

  test(':HearthCancel answers an open permission question "cancelled"', function()
    local held
    select_handler = function(items, opts, on_choice)
      held = on_choice
    end
    local replies = {}
    intercept = function(msg)
      if msg.id == 'perm-test-2' and msg.method == nil then
        table.insert(replies, msg)
        return true
      end
    end
    local s = hearth.current_session()
    S.client:handle_line(rpc.json.encode({
      jsonrpc = '2.0',
      id = 'perm-test-2',
      method = 'session/request_permission',
      params = {
        sessionId = s.id,
        toolCall = { toolCallId = 'call_perm_2', title = 'write_file', status = 'pending' },
        options = { { optionId = 'allow', name = 'Allow', kind = 'allow_once' },
          { optionId = 'reject', name = 'Reject', kind = 'reject_once' } },
      },
    }))
    wait('the question', function()
      return held ~= nil
    end, 5000)
    eq(hearth.statusline(), 'hearth: waiting')
    vim.cmd('HearthCancel')
    eq(#replies, 1, 'replies after :HearthCancel')
    eq(replies[1].result.outcome.outcome, 'cancelled')
    held(nil) -- the user answers late: nothing more is sent
    held({ optionId = 'allow', kind = 'allow_once' })
    eq(#replies, 1, 'replies after a late answer')
    eq(hearth.statusline(), 'hearth: ready')
    intercept = nil
    select_handler = nil
  end)

  test('dismissing a permission question rejects the call once', function()
    local shown
    select_handler = function(items, opts, on_choice)
      shown = opts.prompt
      on_choice(nil) -- <Esc>
    end
    local replies = {}
    intercept = function(msg)
      if msg.id == 77 and msg.method == nil then
        table.insert(replies, msg)
        return true
      end
    end
    S.client:handle_line(rpc.json.encode({
      jsonrpc = '2.0',
      id = 77,
      method = 'session/request_permission',
      params = {
        sessionId = hearth.current_session().id,
        toolCall = { toolCallId = 'call_perm_3', title = 'Write perm.txt' },
        options = { { optionId = 'yes', name = 'Allow', kind = 'allow_once' },
          { optionId = 'no', name = 'Reject', kind = 'reject_once' } },
      },
    }))
    wait('the reply', function()
      return #replies > 0
    end, 5000)
    intercept = nil
    select_handler = nil
    eq(shown, 'hearth: allow Write perm.txt?', 'prompt')
    eq(replies[1].result.outcome.outcome, 'selected')
    eq(replies[1].result.outcome.optionId, 'no')
    eq(hearth.statusline(), 'hearth: ready')
  end)

  test('a command with control characters: the question and the chat show it escaped, on one line', function()
    vim.fn.mkdir(tmp .. '/ws/important', 'p')
    local asked, asked_lines
    select_handler = function(items, opts, on_choice)
      asked, asked_lines = opts.prompt, chat_lines()
      for _, o in ipairs(items) do
        if o.kind == 'reject_once' then
          return on_choice(o)
        end
      end
    end
    -- issue 21's command: printed raw, "\r ESC[2K" would leave "$ ls -la" shown.
    local s = run([[run sim:calls=1 sim:tool=shell sim:args={"command":"rm\u0020-rf\u0020important\u0020#\r\u001b[2K\u0020\u0020\u0020\u0020$\u0020ls\u0020-la\necho\u0020two\u202e"}]])
    select_handler = nil
    eq(s.last_stop, 'end_turn')
    truthy(vim.loop.fs_stat(tmp .. '/ws/important'), 'important/ is still there')
    local shown = [[rm -rf important #\r\x1b[2K    $ ls -la\necho two\u202e]]
    truthy(asked, 'the question was asked')
    truthy(asked:find(shown, 1, true), 'the question shows the command escaped: ' .. asked)
    local function raw(l)
      return l:find('[%z\1-\8\11-\31\127]') or l:find('\226\128\174', 1, true)
    end
    truthy(not raw(asked), 'the question holds a raw control character')
    local header
    for _, l in ipairs(asked_lines) do
      truthy(not raw(l), 'a chat line holds a raw control character: ' .. vim.inspect(l))
      if l:find('^⏺ ') and l:find('rm -rf', 1, true) then
        header = l
      end
    end
    -- the header is the call's title (the command's first line), escaped
    eq(header, [=[⏺ Run rm -rf important #\r\x1b[2K    $ ls -la … [pending]]=], 'the tool header')
    truthy(find_line(asked_lines, [[  │ $ rm -rf important #\r\x1b[2K    $ ls -la]], true),
      'the command beneath it, escaped: ' .. vim.inspect(asked_lines))
    truthy(find_line(asked_lines, [[  │ echo two\u202e]], true), 'its second line')
  end)

  test(':HearthMode sends session/set_mode; current_mode_update is followed', function()
    local s = hearth.current_session()
    S.client:handle_line(rpc.json.encode({
      jsonrpc = '2.0',
      method = 'session/update',
      params = { sessionId = s.id, update = { sessionUpdate = 'current_mode_update', currentModeId = 'code' } },
    }))
    eq(s.mode, 'code', 'mode after current_mode_update')
    local from, nfrom = #sent + 1, #notes + 1
    vim.cmd('HearthMode ask')
    wait('the set_mode answer', function()
      return noted('mode', nil, nfrom) ~= nil
    end)
    local req = last_sent('session/set_mode', from)
    truthy(req, 'session/set_mode was sent')
    eq(req.params.sessionId, s.id)
    eq(req.params.modeId, 'ask')
    local ok = noted('^hearth: mode: ask$', vim.log.levels.INFO, nfrom)
    local bad = noted('could not switch to mode ask', vim.log.levels.ERROR, nfrom)
    truthy(ok or bad, 'set_mode outcome reported: ' .. vim.inspect(notes))
    eq(s.mode, ok and 'ask' or 'code', 'mode after the answer')
    -- without an argument: pick from the modes the agent offered
    nfrom = #notes + 1
    if s.modes and #s.modes > 0 then
      local pick
      for _, m in ipairs(s.modes) do
        if m.id ~= s.mode then
          pick = m
        end
      end
      select_handler = function(items, opts, on_choice)
        on_choice(pick)
      end
      vim.cmd('HearthMode')
      wait('the mode switch', function()
        return s.mode == pick.id
      end)
      select_handler = nil
    else
      vim.cmd('HearthMode')
      truthy(noted('offers no modes', vim.log.levels.WARN, nfrom), 'warning without modes')
    end
  end)

  test(':HearthModel and :HearthEffort send session/set_config_option; the statusline shows model, effort and context left', function()
    local s = run('how full are you?')
    local model = truthy(require('hearth.options').find(s.options, 'model'), 'a model option: ' .. vim.inspect(s.options))
    eq(model.current, 'gpt-5.3-codex', 'the configured model')
    truthy(s.usage, 'a usage_update after the answer')
    eq(s.usage.size, 272000, "the window of the model's profile")
    truthy(hearth.session_line():match('^gpt%-5%.3%-codex · medium · %d+%% context left$'), 'session line: ' .. hearth.session_line())
    local from, nfrom = #sent + 1, #notes + 1
    vim.cmd('HearthModel o3')
    wait('the model answer', function()
      return noted('^hearth: model: o3$', vim.log.levels.INFO, nfrom) ~= nil
    end)
    local req = last_sent('session/set_config_option', from)
    truthy(req, 'session/set_config_option was sent')
    eq(req.params.configId, 'model')
    eq(req.params.value, 'o3')
    eq(table.concat(vim.fn.getcompletion('HearthEffort ', 'cmdline'), ' '), 'low medium high', "o3's efforts complete")
    -- without an argument: pick from the efforts the agent offers
    select_handler = function(items, opts, on_choice)
      eq(opts.prompt, 'hearth reasoning effort')
      for _, v in ipairs(items) do
        if v.value == 'high' then
          return on_choice(v)
        end
      end
    end
    vim.cmd('HearthEffort')
    wait('the effort switch', function()
      local e = require('hearth.options').find(s.options, 'thought_level')
      return e and e.current == 'high'
    end)
    select_handler = nil
    -- o3's window, from the usage the choice told
    wait("o3's window", function()
      return s.usage.size == 200000
    end)
    truthy(hearth.session_line():match('^o3 · high · %d+%% context left$'), 'session line: ' .. hearth.session_line())
    -- another editor's choice reaches this one as config_option_update
    feed_updates(s.id, { { sessionUpdate = 'config_option_update', configOptions = {
      { id = 'model', name = 'Model', category = 'model', type = 'select', currentValue = 'gpt-4o',
        options = { { value = 'o3', name = 'o3' }, { value = 'gpt-4o', name = 'gpt-4o' } } },
    } } })
    truthy(hearth.session_line():match('^gpt%-4o · %d+%% context left$'), 'after config_option_update: ' .. hearth.session_line())
    nfrom = #notes + 1
    vim.cmd('HearthEffort high')
    truthy(noted('offers no reasoning effort', vim.log.levels.WARN, nfrom), 'no effort for a model that does not reason')
    vim.cmd('HearthModel gpt-5.3-codex')
    wait('the model back', function()
      local m = require('hearth.options').find(s.options, 'model')
      return m and m.current == 'gpt-5.3-codex'
    end)
  end)

  test("a running command's output shows in the chat before it ends", function()
    local fifo = ws .. '/go-on'
    os.remove(fifo)
    eq(vim.fn.system({ 'mkfifo', fifo }), '', 'mkfifo')
    select_handler = function(items, opts, on_choice)
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    local before = turns_done
    local cmd = 'echo first; read x < go-on; echo second'
    vim.cmd('Hearth r sim:calls=1 sim:tool=shell sim:args=' .. rpc.json.encode({ command = cmd }):gsub(' ', '\\u0020'))
    wait('the first line while the command runs', function()
      return find_line(chat_lines(), require('hearth.chat').OUT .. 'first', true) ~= nil
    end)
    eq(turns_done, before, 'the turn is still running')
    local lines = last_turn(chat_lines())
    truthy(find_line(lines, '⏺ Run ' .. cmd .. ' [in_progress]', true), 'the call runs: ' .. vim.inspect(lines))
    eq(find_line(lines, require('hearth.chat').OUT .. 'second', true), nil, 'not yet the second line')
    vim.fn.system({ 'sh', '-c', 'echo > go-on' })
    wait('the turn to end', function()
      return turns_done > before
    end)
    select_handler = nil
    lines = last_turn(chat_lines())
    local i = truthy(find_line(lines, '⏺ Run ' .. cmd .. ' [completed]', true), 'completed: ' .. vim.inspect(lines))
    -- The result replaces the live output, in the layout the model reads.
    local OUT = require('hearth.chat').OUT
    eq(lines[i + 1], OUT .. 'Exit code: 0')
    truthy(lines[i + 2]:match('^' .. vim.pesc(OUT) .. 'Wall time: [%d.]+ seconds$'), 'wall time: ' .. vim.inspect(lines))
    eq(lines[i + 3], OUT .. 'Output:')
    eq(lines[i + 4], OUT .. 'first')
    eq(lines[i + 5], OUT .. 'second')
    eq(find_line(lines, OUT .. 'first', true), i + 4, 'the output once, not once per update')
    os.remove(fifo)
  end)

  test('session times: local, "today 14:02", "yesterday 09:30", "Nov 28 16:40"', function()
    local when = require('hearth.when')
    local tz = vim.env.TZ
    vim.env.TZ = 'XST-5:30' -- POSIX: local time is UTC+5:30
    os.time() -- mktime re-reads TZ for the os.date calls that follow
    local ok, err = pcall(function()
      eq(os.date('%H:%M', 0), '05:30', 'the test time zone is in effect')
      local now = when.parse('2026-12-02T10:00:00Z') -- 15:30 local
      eq(now, 1796205600, 'epoch of 2026-12-02T10:00:00Z')
      for _, c in ipairs({
        { '2026-12-02T08:32:00Z', 'today 14:02' },
        { '2026-12-02T08:32:00.123456789Z', 'today 14:02' },
        { '2026-12-02T10:32:00+02:00', 'today 14:02' },
        { '2026-12-01T20:00:00Z', 'today 01:30' }, -- yesterday in UTC, today here
        { '2026-12-01T04:00:00Z', 'yesterday 09:30' },
        { '2026-11-30T18:29:00Z', 'Nov 30 23:59' },
        { '2026-11-28T11:10:00Z', 'Nov 28 16:40' },
        { '2025-11-28T11:10:00Z', 'Nov 28 2025 16:40' },
        { '2026-03-01T00:00:00Z', 'Mar 1 05:30' },
      }) do
        eq(when.human(when.parse(c[1]), now), c[2], c[1])
      end
      eq(when.parse('yesterday'), nil, 'not a time')
      eq(when.parse('2026-13-01T00:00:00Z'), nil, 'month 13')
    end)
    vim.env.TZ = tz
    os.time()
    if not ok then
      error(err, 0)
    end
  end)

  test(':HearthResume replays a stored session into its buffer', function()
    vim.cmd('HearthNew')
    wait('the new session', function()
      local s = hearth.current_session()
      return s and s.id ~= sid1
    end)
    local sid2 = hearth.current_session().id
    eq(#chat_lines(), 1, 'a new session has an empty buffer')
    run('in the new session')
    local old = S.sessions[sid1].chat.buf
    vim.cmd('bwipeout! ' .. old) -- whatever shows up comes from the replay
    local listed, shown
    select_handler = function(items, opts, on_choice)
      eq(opts.kind, 'hearth_session')
      listed = items
      for _, it in ipairs(items) do
        if it.sessionId == sid1 then
          shown = opts.format_item(it)
          return on_choice(it)
        end
      end
      on_choice(nil)
    end
    vim.cmd('HearthResume')
    wait('the replay', function()
      local s = hearth.current_session()
      return listed ~= nil and s.id == sid1 and not s.loading
    end)
    select_handler = nil
    local ids = {}
    for _, it in ipairs(listed) do
      ids[it.sessionId] = true
    end
    truthy(ids[sid1] and ids[sid2], 'both sessions listed: ' .. vim.inspect(listed))
    -- the session's title (its first prompt) and when it was last used, in
    -- local time; the session began minutes ago (today, or yesterday just
    -- after midnight)
    truthy(shown, 'the first session was listed')
    local cwd = vim.fn.fnamemodify(vim.loop.fs_realpath(ws), ':~')
    -- marked ● as the current directory's
    local ok_when = shown:match('^● today %d%d:%d%d  hello there  (.*)$')
      or shown:match('^● yesterday %d%d:%d%d  hello there  (.*)$')
    eq(ok_when, cwd, 'the listed session: ' .. shown)
    local s = hearth.current_session()
    truthy(s.chat.buf ~= old, 'a new buffer')
    local lines = chat_lines()
    eq(lines[1], '## You', 'first line of ' .. vim.inspect(lines))
    eq(lines[2], 'hello there')
    for _, want in ipairs({ 'You said: hello there', 'second message', 'You said: second message',
      'read a.txt', '⏺ Read a.txt [completed]', '  │      1\thello', 'I called read_file 1 time(s). Last result:',
      '⏺ Read shot.png [completed]', '  │ [image: PNG, 70 B]' }) do
      truthy(find_line(lines, want, true), 'replayed "' .. want .. '" in ' .. vim.inspect(lines))
    end
    eq(find_line(lines, 'in the new session', true), nil, 'the other session is not mixed in')
    local img = find_line(lines, 'what is this', true)
    eq(img and lines[img + 1], '[image: PNG, 70 B]', 'the pasted image is replayed under its prompt')
    eq(hearth.statusline(), 'hearth: ready')
    wait('the usage after resume', function()
      return hearth.current_session().usage ~= nil
    end)
    truthy(hearth.session_line():match('%d+%% context left$'), 'session line after resume: ' .. hearth.session_line())
    run('after resume')
    truthy(has_line('You said: after resume'), 'the resumed session answers')
    -- resuming a session whose buffer exists rebuilds it instead of appending
    local done
    hearth.resume(sid1, function()
      done = true
    end)
    wait('the second replay', function()
      return done
    end)
    local count = 0
    for _, l in ipairs(chat_lines()) do
      if l == 'You said: hello there' then
        count = count + 1
      end
    end
    eq(count, 1, 'replayed answers after a second resume')
    truthy(has_line('You said: after resume'), 'the latest answer is replayed too')
  end)

  test(':HearthResume replays the thoughts, folded, before their answers', function()
    local s = hearth.current_session()
    eq(s.id, sid1, 'the resumed session is current')
    local lines = chat_lines()
    local h = find_line(lines, '^✻ ')
    local a = truthy(find_line(lines, 'You said: hello there', true), 'the answer in ' .. vim.inspect(lines))
    truthy(h, 'a replayed thought in ' .. vim.inspect(lines))
    truthy(h < a, 'the thought comes before the first answer')
    truthy(lines[h]:find('^✻ Thought'), 'finished header: ' .. lines[h])
    truthy(thought_text(lines, h):find('%S'), 'the replayed thought has text')
    eq(fold_of(h), h, 'the replayed thought is folded')
  end)

  test('the plan: one checklist, replaced whole on each update, live and on resume', function()
    local s = hearth.current_session()
    -- plans returns how many plan headers the chat holds and the first one's line.
    local function plans()
      local lines, n, at = chat_lines(), 0, nil
      for i, l in ipairs(lines) do
        if l:find('☰ Plan', 1, true) == 1 then
          n, at = n + 1, at or i
        end
      end
      return n, at, lines
    end
    run('plan read the code; fix the bug')
    local n, at, lines = plans()
    eq(n, 1, 'one plan in ' .. vim.inspect(lines))
    eq(vim.inspect({ lines[at], lines[at + 1], lines[at + 2] }), vim.inspect({ '☰ Plan (0/2 done)', '  [~] read the code', '  [ ] fix the bug' }))
    eq(find_line(lines, 'update_plan [', true), nil, 'update_plan is not shown as a tool call')
    run('plan read the code; fix the bug; run the tests')
    n, at, lines = plans()
    eq(n, 1, 'still one plan in ' .. vim.inspect(lines))
    eq(vim.inspect({ lines[at], lines[at + 3] }), vim.inspect({ '☰ Plan (0/3 done)', '  [ ] run the tests' }))
    truthy(at > find_line(lines, 'plan read the code; fix the bug; run the tests', true), 'the plan moved to the latest turn')
    -- An update while the plan ends the buffer replaces it in place.
    local entry = function(content, status)
      return { content = content, status = status, priority = 'medium' }
    end
    local before = #chat_lines()
    feed_updates(s.id, { { sessionUpdate = 'plan', entries = { entry('read the code', 'completed'), entry('fix the bug', 'in_progress') } } })
    wait('the plan fed', function()
      return has_line('☰ Plan (1/2 done)')
    end)
    n, at, lines = plans()
    eq(vim.inspect({ n, lines[at + 1], lines[at + 2] }), vim.inspect({ 1, '  [x] read the code', '  [~] fix the bug' }))
    truthy(#lines <= before, 'replaced, not appended')
    -- A resumed session shows the last plan the agent made.
    local done
    hearth.resume(s.id, function()
      done = true
    end)
    wait('the replay', function()
      return done
    end)
    n, at, lines = plans()
    eq(n, 1, 'one plan after resume in ' .. vim.inspect(lines))
    eq(vim.inspect({ lines[at], lines[at + 1], lines[at + 3] }), vim.inspect({ '☰ Plan (0/3 done)', '  [~] read the code', '  [ ] run the tests' }))
  end)

  test('the daemon killed mid-turn: a clear error, and the next :Hearth works', function()
    local pid = status().pid
    truthy(alive(pid), 'daemon pid ' .. tostring(pid))
    relay.hold('tok2')
    local from = #notes + 1
    vim.cmd('Hearth doomed sim:tokens=15000')
    local s = hearth.current_session()
    wait('the start of the answer', function()
      return relay.held ~= nil and last_line() == 'tok0 tok1'
    end)
    truthy(s.turn, 'the turn is running')
    vim.loop.kill(pid, 'sigkill')
    wait('the agent to go away', function()
      return hearth.statusline() == 'hearth: off'
    end)
    relay.release()
    local err = noted('went away mid%-turn', vim.log.levels.ERROR, from)
    truthy(err, 'error notification: ' .. vim.inspect(notes))
    eq(s.turn, nil, 'no turn left running')
    eq(s.last_stop, 'disconnected')
    local lines = chat_lines()
    eq(lines[#lines], '✗ connection lost: the agent went away mid-turn', 'last line')
    eq(lines[#lines - 1], 'tok0 tok1', 'what streamed before stays')
    run('hello again')
    truthy(has_line('You said: hello again'), 'answer after reconnecting')
    eq(hearth.current_session().id, s.id, 'same session after reconnecting')
    eq(hearth.statusline(), 'hearth: ready')
    truthy(status().pid ~= pid, 'a new daemon')
  end)

  test('setup{mcp_servers}: the model calls an MCP server\'s tool, with permission', function()
    local server = truthy(os.getenv('HEARTH_MCP_SERVER'), 'HEARTH_MCP_SERVER is not set')
    hearth.setup({ mcp_servers = {
      tests = { command = server, args = { '__mcp-test-server' } },
      bad = { type = 'ftp' },
    } })
    local from, sent_from = #notes + 1, #sent + 1
    local before = hearth.current_session() and hearth.current_session().id
    vim.cmd('HearthNew')
    wait('the new session', function()
      local s = hearth.current_session()
      return s and s.id ~= before
    end)
    truthy(noted('mcp_servers.bad: unknown type', vim.log.levels.WARN, from), 'the bad entry is reported: ' .. vim.inspect(notes))
    local req
    for i = sent_from, #sent do
      if sent[i].method == 'session/new' then
        req = sent[i]
      end
    end
    truthy(req, 'a session/new was sent')
    eq(#req.params.mcpServers, 1, 'servers sent')
    eq(req.params.mcpServers[1].name, 'tests', 'the server sent')
    eq(req.params.mcpServers[1].command, server, 'its command')
    local asked = 0
    select_handler = function(items, opts, on_choice)
      asked = asked + 1
      for _, o in ipairs(items) do
        if o.kind == 'allow_once' then
          return on_choice(o)
        end
      end
    end
    run('m sim:calls=1 sim:tool=mcp__tests__echo sim:args={"text":"from-nvim"}')
    eq(asked, 1, 'permission questions')
    local turn = last_turn(chat_lines())
    truthy(find_line(turn, 'echo: from-nvim', true), 'the tool\'s answer in ' .. vim.inspect(turn))
    select_handler = nil
    hearth.setup({ mcp_servers = {} })
  end)

  -- new_session runs :HearthNew and returns the new session once it is current.
  local function new_session()
    local before = hearth.current_session() and hearth.current_session().id
    vim.cmd('HearthNew')
    wait('the new session', function()
      local s = hearth.current_session()
      return s and s.id ~= before
    end)
    return hearth.current_session()
  end
  -- full_auto sets the current session's mode so that edits ask nothing.
  local function full_auto()
    local done
    hearth.set_mode('full-auto', function(err)
      done = { err }
    end)
    wait('the mode', function()
      return done ~= nil
    end)
    eq(done[1], nil, 'set_mode error')
  end

  test(':Hearth during a turn steers it, shown where it landed; :HearthQueue runs after the turn', function()
    local s = new_session()
    truthy(hearth.steering_supported(), 'initialize advertised _meta.steering.supported')
    local from = #sent + 1
    local before = turns_done
    vim.cmd('Hearth slow') -- the simulator streams this answer for about 10 s
    wait('the answer streaming', function()
      local turn = last_turn(chat_lines())
      return s.turn ~= nil and turn[2] == 'slow' and find_line(turn, '## hearth', true) ~= nil
        and last_line() ~= '' and last_line() ~= '## hearth'
    end)
    vim.cmd('HearthQueue after the steer')
    truthy(noted('queued: runs after the current turn'), 'the queue is said')
    local outcome
    hearth.prompt('say banana', function(o)
      outcome = o
    end)
    wait('the steering outcome', function()
      return outcome ~= nil
    end)
    eq(outcome, 'injected', 'steering outcome')
    wait('both turns', function()
      return turns_done >= before + 2
    end, 30000)
    local steer = truthy(last_sent('_session/steering', from), 'a _session/steering request')
    eq(steer.params.prompt[1].text, 'say banana', 'steered text')
    local prompts = {}
    for i = from, #sent do
      if sent[i].method == 'session/prompt' then
        table.insert(prompts, sent[i].params.prompt[1].text)
      end
    end
    eq(table.concat(prompts, '|'), 'slow|after the steer', 'prompts sent (the queued one while the turn ran)')
    local lines = chat_lines()
    local you = {}
    for i, l in ipairs(lines) do
      if l == '## You' then
        table.insert(you, lines[i + 1])
      end
    end
    eq(table.concat(vim.list_slice(you, #you - 2), '|'), 'slow|say banana|after the steer', 'user blocks in order')
    local at = find_line(lines, 'say banana', true)
    truthy(find_line(vim.list_slice(lines, at), 'You said: say banana', true), 'the steered answer below the steering text')
    truthy(find_line(vim.list_slice(lines, at), 'You said: after the steer', true), 'the queued prompt answered')
    eq(s.last_stop, 'end_turn', 'stop reason')
    eq(#s.queue, 0, 'nothing left queued')
  end)

  test(':HearthUndo puts back the last turn\'s files, buffers included, and names conflicts', function()
    new_session()
    full_auto()
    write(ws .. '/u.txt', 'one\n')
    run('go sim:steps=[["edit_file",{"path":"u.txt","old_string":"one","new_string":"two"}],["write_file",{"path":"made.txt","content":"made\\n"}]]')
    local u = vim.fn.bufnr(ws .. '/u.txt')
    eq(table.concat(vim.api.nvim_buf_get_lines(u, 0, -1, false), '|'), 'two', 'u.txt after the turn')
    eq(vim.fn.filereadable(ws .. '/made.txt'), 1, 'made.txt created')
    -- asked first, the files listed from a dry run; No changes nothing
    local asked = #confirmed + 1
    confirm_handler = function()
      return 2
    end
    vim.cmd('HearthUndo')
    wait('the question', function()
      return confirmed[asked] ~= nil
    end)
    local q = confirmed[asked].msg
    truthy(q:find('To restore:\n    u.txt\n', 1, true) and q:find('To remove (created by that turn):\n    made.txt\n', 1, true), 'the files in the question: ' .. q)
    eq(confirmed[asked].choices, '&Yes\n&No', 'Yes/No')
    eq(last_sent('_hearth/undo', 1).params.dryRun, true, 'a dry run')
    eq(table.concat(vim.api.nvim_buf_get_lines(u, 0, -1, false), '|'), 'two', 'said No: u.txt as it was')
    eq(vim.fn.filereadable(ws .. '/made.txt'), 1, 'said No: made.txt stays')
    confirm_handler = function()
      return 1
    end
    local got
    vim.cmd('HearthUndo')
    wait('the undo', function()
      local req = last_sent('_hearth/undo', 1)
      got = req and not req.params.dryRun and hearth.current_session().chat:lines()
      return got and find_line(got, '⟲ undo:', true) ~= nil
    end)
    eq(table.concat(vim.api.nvim_buf_get_lines(u, 0, -1, false), '|'), 'one', 'u.txt back in its buffer')
    eq(vim.fn.filereadable(ws .. '/made.txt'), 0, 'made.txt removed')
    truthy(find_line(got, '  restored: u.txt', true), 'restored named in ' .. vim.inspect(got))
    truthy(find_line(got, '  removed (the turn created them): made.txt', true), 'removed named')
    truthy(noted('undo: 1 restored, 1 removed', vim.log.levels.INFO), 'the summary notified')
    -- a file the user changed after the turn keeps the user's text: a conflict
    write(ws .. '/c.txt', 'c\n')
    run('go sim:steps=[["edit_file",{"path":"c.txt","old_string":"c","new_string":"hearths"}]]')
    local c = vim.fn.bufnr(ws .. '/c.txt')
    vim.api.nvim_buf_set_lines(c, 0, -1, false, { "the user's" })
    confirm_handler = nil -- the bang asks nothing
    local from = #sent + 1
    vim.cmd('HearthUndo!')
    wait('the second undo', function()
      return noted('undo: 1 conflicts', vim.log.levels.WARN) ~= nil
    end)
    eq(last_sent('_hearth/undo', from).params.dryRun, nil, 'no dry run')
    eq(table.concat(vim.api.nvim_buf_get_lines(c, 0, -1, false), '|'), "the user's", "the user's text kept")
    truthy(find_line(chat_lines(), '  conflicts (changed since, left as they are): c.txt', true), 'the conflict in the chat')
    truthy(noted('undo: 1 conflicts', vim.log.levels.WARN), 'a conflict warns')
  end)

  test(':HearthRewind lists the turns to pick from, rewinds the one picked, shows files, conflicts and their diffs', function()
    local s = new_session()
    full_auto()
    write(ws .. '/r.txt', 'one\n')
    write(ws .. '/rc.txt', 'c\n')
    -- over the daemon's pre-image limit (16 MiB): what a command changes in it is not kept
    write(ws .. '/big.bin', string.rep('\0', 16 * 1024 * 1024 + 1))
    run('notes sim:steps=[["edit_file",{"path":"r.txt","old_string":"one","new_string":"two"}],["write_file",{"path":"rmade.txt","content":"made\\n"}]]')
    run([=[fix sim:steps=[["edit_file",{"path":"rc.txt","old_string":"c","new_string":"hearths"}],["exec_command",{"cmd":"echo\u0020x\u0020>>\u0020big.bin"}]]]=])
    local c = vim.fn.bufnr(ws .. '/rc.txt')
    vim.api.nvim_buf_set_lines(c, 0, -1, false, { "the user's" }) -- changed and saved since: a conflict
    vim.api.nvim_buf_call(c, function()
      vim.cmd('silent write')
    end)
    -- :HearthRewind N asks first, listing the turns it takes back and their files; No changes nothing
    local asked = #confirmed + 1
    confirm_handler = function()
      return 2
    end
    vim.cmd('HearthRewind 2')
    wait('the question', function()
      return confirmed[asked] ~= nil
    end)
    local q = confirmed[asked].msg
    truthy(q:find('before prompt 2?', 1, true) and q:find('\n2%. fix sim:steps=[^\n]*\n    rc%.txt\n'), 'turn 2 and its files in the question: ' .. q)
    eq(q:find('r.txt\n', 1, true) == nil and q:find('1. notes', 1, true) == nil, true, 'turn 1 is not taken back: ' .. q)
    eq(table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr(ws .. '/r.txt'), 0, -1, false), '|'), 'two', 'said No: r.txt as it was')
    eq(vim.fn.filereadable(ws .. '/rmade.txt'), 1, 'said No: rmade.txt stays')
    asked = #confirmed + 1
    confirm_handler = function()
      return 1
    end
    local from = #sent + 1
    local shown
    select_handler = function(items, opts, on_choice)
      eq(opts.kind, 'hearth_rewind')
      shown = {}
      for _, it in ipairs(items) do
        table.insert(shown, opts.format_item(it))
      end
      on_choice(items[1])
    end
    local res
    hearth.rewind(nil, function(err, r)
      res = r or { err = err }
    end)
    wait('the rewind', function()
      return res ~= nil
    end, 30000)
    select_handler = nil
    confirm_handler = nil
    q = confirmed[asked] and confirmed[asked].msg or ''
    truthy(q:find('\n1%. notes sim:steps=[^\n]*\n    r%.txt\n    rmade%.txt\n2%. fix sim:steps=[^\n]*\n    rc%.txt\n'), 'both turns and their files in the question: ' .. q)
    asked = {}
    for i = from, #sent do
      if sent[i].method == '_hearth/rewind' then
        table.insert(asked, sent[i].params)
      end
    end
    eq(#asked, 2, 'a list, then the rewind')
    eq(asked[1].turn, nil, 'listing asks without a turn')
    eq(asked[2].turn, 1, 'the turn picked')
    eq(asked[2].sessionId, s.id, 'the session')
    eq(#shown, 2, 'the turns listed: ' .. vim.inspect(shown))
    truthy(shown[1]:find('^1%. notes sim:steps=') and shown[1]:find('  %(2 files changed%)$'), 'turn 1 as listed: ' .. shown[1])
    truthy(shown[2]:find('^2%. fix sim:steps='), 'turn 2 as listed: ' .. shown[2])
    eq(res.rewound, true, 'rewound: ' .. vim.inspect(res))
    -- back to before prompt 1: turn 1 and every turn after it are taken back
    eq(table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr(ws .. '/r.txt'), 0, -1, false), '|'), 'one', 'r.txt back in its buffer')
    eq(vim.fn.filereadable(ws .. '/rmade.txt'), 0, 'rmade.txt removed')
    eq(table.concat(vim.api.nvim_buf_get_lines(c, 0, -1, false), '|'), "the user's", "the user's text kept")
    local lines = chat_lines()
    local at0 = truthy(find_line(lines, '⟲ rewind to before prompt 1: Rewound this session to before turn 1', true), 'the result in ' .. vim.inspect(lines))
    lines = vim.list_slice(lines, at0)
    truthy(find_line(lines, '  restored: r.txt', true), 'restored: ' .. vim.inspect(lines))
    truthy(find_line(lines, '  removed (the turn created them): rmade.txt', true), 'removed')
    truthy(find_line(lines, '  conflicts (changed since, left as they are): rc.txt', true), 'the conflict')
    truthy(find_line(lines, '  not restorable: big.bin', true), 'not restorable')
    local at = truthy(find_line(lines, '⏺ conflict rc.txt', true), 'the conflict diff header')
    local OUT = require('hearth.chat').OUT
    truthy(find_line(vim.list_slice(lines, at), OUT .. '-hearths', true), 'what the turn left, beneath it')
    truthy(find_line(vim.list_slice(lines, at), OUT .. "+the user's", true), 'what is there now, beneath it')
    truthy(noted('rewind to before prompt 1: 1 restored, 1 removed, 1 conflicts, 1 not restorable', vim.log.levels.WARN), 'the summary warned')
    -- the list says them rewound; replayed, a rewound prompt is marked
    local listed
    hearth.request('_hearth/rewind', { sessionId = s.id }, function(_, r)
      listed = r
    end)
    wait('the list after the rewind', function()
      return listed ~= nil
    end)
    truthy(require('hearth.checkpoints').format_turn(listed.turns[2]):find('  %[rewound%]$'), 'turn 2 listed as rewound')
    local loaded
    hearth.resume(s.id, function(err)
      loaded = { err }
    end)
    wait('the replay', function()
      return loaded ~= nil
    end)
    eq(loaded[1], nil, 'resume error')
    truthy(find_line(chat_lines(), '(rewound) notes sim:steps=', true), 'a rewound prompt is marked: ' .. vim.inspect(chat_lines()))
    truthy(find_line(chat_lines(), '(rewound) fix sim:steps=', true), 'every prompt after it too')
  end)

  test(':HearthFork: refused when the agent does not offer it; session/fork makes a new session that holds the history', function()
    local s = new_session()
    run('before the fork')
    run('numbered prompt')
    truthy(s.turns[2], 'the daemon numbered the second prompt')
    local agent = S.agent
    truthy(require('hearth.checkpoints').fork_from_turn_supported(agent), 'the daemon offers session/fork from a prompt')
    -- The real daemon always offers session/fork (from a prompt too): the
    -- refusals are checked against an initialize answer without it (a stub
    -- of the capability only; nothing is sent).
    local from, sent_from = #notes + 1, #sent + 1
    local function offering(fork)
      local a = vim.deepcopy(agent)
      a.agentCapabilities.sessionCapabilities = fork and { fork = fork } or vim.empty_dict()
      return a
    end
    local done
    S.agent = offering(nil)
    hearth.fork(nil, function(err)
      done = { err }
    end)
    wait('the refusal', function()
      return done ~= nil
    end)
    eq(done[1], 'unsupported', 'without the capability')
    truthy(noted('does not offer fork', vim.log.levels.WARN, from), 'said so')
    S.agent = offering(vim.empty_dict())
    done = nil
    hearth.fork(2, function(err)
      done = { err }
    end)
    wait('the refusal of a fork from a prompt', function()
      return done ~= nil
    end)
    S.agent = agent
    eq(done[1], 'unsupported', 'without fork._meta["hearth/fromTurn"]')
    eq(last_sent('session/fork', sent_from), nil, 'nothing sent')
    -- the real daemon: the whole session
    done = nil
    hearth.fork(nil, function(err, ns)
      done = { err, ns }
    end)
    wait('the fork', function()
      return done ~= nil
    end)
    eq(done[1], nil, 'fork error')
    local forked = truthy(last_sent('session/fork', sent_from), 'a session/fork request')
    eq(forked.params.sessionId, s.id, 'forked from the current session')
    eq(forked.params.cwd, s.cwd, 'cwd')
    local f1 = hearth.current_session()
    truthy(f1.id ~= s.id and f1.id == done[2].id, 'the fork is current')
    local lines = chat_lines()
    truthy(find_line(lines, 'before the fork', true), 'the history in the fork')
    truthy(find_line(lines, 'numbered prompt', true), 'the whole history')
    eq(lines[#lines], '⑂ forked from session ' .. s.id .. ': this is session ' .. f1.id, 'the fork says so')
    run('in the fork')
    truthy(has_line('You said: in the fork'), 'the fork answers')
    -- from before prompt 2
    S.current = s.id
    vim.cmd('HearthFork 2')
    wait('the fork from prompt 2', function()
      local cur = hearth.current_session().id
      return cur ~= s.id and cur ~= f1.id
    end)
    local f2 = hearth.current_session()
    forked = last_sent('session/fork', sent_from)
    eq(forked.params._meta['hearth/turn'], 2, '_meta["hearth/turn"]')
    lines = chat_lines()
    truthy(find_line(lines, 'before the fork', true), 'the history before prompt 2')
    eq(find_line(lines, 'numbered prompt', true), nil, 'prompt 2 is not in the fork')
    eq(lines[#lines], '⑂ forked from session ' .. s.id .. ' before prompt 2: this is session ' .. f2.id, 'the fork says so')
    -- what the daemon holds of the fork: replayed, the history before prompt 2
    local loaded
    hearth.resume(f2.id, function(err)
      loaded = { err }
    end)
    wait('the replay of the fork', function()
      return loaded ~= nil
    end)
    eq(loaded[1], nil, 'resume error')
    lines = chat_lines()
    truthy(find_line(lines, 'before the fork', true), 'the daemon holds the history: ' .. vim.inspect(lines))
    eq(find_line(lines, 'numbered prompt', true), nil, 'and not prompt 2')
  end)

  test(':Hearth /compact: the offered command completes, is listed, compacts the session, which answers after', function()
    local before = hearth.current_session() and hearth.current_session().id
    vim.cmd('HearthNew')
    wait('the new session', function()
      local s = hearth.current_session()
      return s and s.id ~= before
    end)
    local s = hearth.current_session()
    run('before compacting')
    -- available_commands_update came at the start of the turn
    local names = {}
    for _, c in ipairs(hearth.commands()) do
      names[c.name] = c.description
    end
    truthy(names.compact and names.compact ~= '', 'compact offered with a description: ' .. vim.inspect(hearth.commands()))
    truthy(vim.tbl_contains(vim.fn.getcompletion('Hearth /', 'cmdline'), '/compact'), ':Hearth / completes /compact')
    eq(vim.fn.getcompletion('Hearth /co', 'cmdline')[1], '/compact', ':Hearth /co completes')
    eq(#vim.fn.getcompletion('Hearth /zz', 'cmdline'), 0, 'no command starts with /zz')
    eq(#vim.fn.getcompletion('Hearth fix /co', 'cmdline'), 0, 'only a prompt that is one word completes')
    local from = #notes + 1
    status()
    truthy(noted('\n  /compact  ', nil, from), ':HearthStatus lists the commands: ' .. vim.inspect(notes[#notes]))
    run('/compact')
    eq(s.last_stop, 'end_turn', 'stop reason of /compact')
    local turn = last_turn(chat_lines())
    eq(turn[2], '/compact', 'the prompt shown')
    truthy(find_line(turn, '> hearth: compacted this session (asked by the user)', true), 'the notice in ' .. vim.inspect(turn))
    eq(find_line(turn, 'You said:', true), nil, 'the model was not prompted with /compact')
    run('after compacting')
    turn = last_turn(chat_lines())
    truthy(find_line(turn, 'You said: after compacting', true), 'the answer after compacting in ' .. vim.inspect(turn))
    eq(hearth.current_session().id, s.id, 'the same session')
  end)

  test(':help hearth opens the documentation', function()
    -- no :helptags here: loading the plugin built them
    eq(vim.fn.filereadable(root .. '/doc/tags'), 1, 'doc/tags after the plugin loaded')
    for _, tag in ipairs({ 'hearth', ':Hearth', 'hearth-slash-commands', ':HearthResume', ':HearthRules', ':HearthProcesses', ':HearthMode', ':HearthModel', ':HearthEffort', 'hearth-context', ':HearthImage', 'hearth-images', 'hearth-plan', 'hearth-statusline',
      'hearth-permissions', 'hearth-buffers', 'hearth.setup()', 'hearth-thoughts', 'hl-hearthThought', 'hearth-mcp',
      ':HearthQueue', 'hearth-steering', ':HearthUndo', ':HearthRewind', ':HearthFork' }) do
      vim.cmd('help ' .. tag)
      eq(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t'), 'hearth.txt', 'help file for ' .. tag)
      truthy(vim.api.nvim_get_current_line():find('*' .. tag .. '*', 1, true), 'cursor on the tag ' .. tag)
      vim.cmd('helpclose')
    end
  end)

  test('no Lua errors in :messages', function()
    local msgs = vim.fn.execute('messages')
    for _, bad in ipairs({ 'E5108', 'Error', 'stack traceback', 'E%d+:' }) do
      eq(msgs:match(bad), nil, ':messages contains ' .. bad .. ':\n' .. msgs)
    end
    eq(noted('internal error'), nil, 'internal errors')
    eq(noted('bad message'), nil, 'undecodable messages from the agent')
  end)

  out('permission test path: ' .. perm_path)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  failed = failed + 1
  out('FAIL harness\n' .. tostring(err))
end
local cok, cerr = pcall(cleanup)
if not cok then
  failed = failed + 1
  out('FAIL cleanup\n' .. tostring(cerr))
end
out(string.format('%d passed, %d failed', passed, failed))
if failed > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end
