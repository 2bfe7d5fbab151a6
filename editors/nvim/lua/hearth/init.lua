-- hearth.nvim: chat with the hearth agent daemon over ACP.
--
-- One `hearth acp` job per Neovim (started on the first command, restarted
-- on the next command after it ended), one chat buffer per ACP session.
local rpc = require('hearth.rpc')
local chat = require('hearth.chat')
local files = require('hearth.files')
local image = require('hearth.image')
local options = require('hearth.options')
local when = require('hearth.when')
local nn = rpc.nn

local M = {}

M.version = '0.1.0'

M.config = {
  cmd = { 'hearth', 'acp' }, -- the agent command line
  env = nil, -- extra environment for it, e.g. { HEARTH_SOCKET = '/tmp/h.sock' }
  open = 'botright vsplit', -- how the chat window is opened
  -- MCP servers whose tools the model may call, keyed by name:
  -- { github = { command = 'npx', args = {...}, env = { GITHUB_TOKEN = '...' } },
  --   docs = { type = 'http', url = 'https://...', headers = { Authorization = '...' } } }
  mcp_servers = nil,
}

-- state of the plugin; M._state for tests and debugging.
local S = {
  client = nil, -- the rpc client of the running job
  phase = 'off', -- off | starting | ready
  waiters = {}, -- callbacks waiting for the job to be ready
  agent = nil, -- the initialize result
  sessions = {}, -- sessionId -> session
  current = nil, -- the session :Hearth talks to
  asking = 0, -- permission questions on screen
  images = {}, -- images attached to the next prompt (:HearthImage)
}
M._state = S

local function notify(msg, level)
  vim.notify('hearth: ' .. msg, level or vim.log.levels.INFO)
end

-- changed tells statuslines (and anyone listening) that something moved.
local function changed()
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'HearthUpdate', modeline = false })
  pcall(vim.cmd, 'redrawstatus!')
end

M._changed = changed

local function busy()
  for _, s in pairs(S.sessions) do
    if s.turn or s.loading then
      return true
    end
  end
  return false
end

--- The statusline component: "hearth: off" (no agent job), "hearth: starting",
--- "hearth: waiting" (a permission question is open), "hearth: streaming"
--- (a turn or a replay is running) or "hearth: ready".
--- Put M.session_line() beside it for the current session's model, effort
--- and context left ("o3 · high · 62% context left").
function M.statusline()
  if S.phase == 'off' then
    return 'hearth: off'
  elseif S.phase == 'starting' then
    return 'hearth: starting'
  elseif S.asking > 0 then
    return 'hearth: waiting'
  elseif busy() then
    return 'hearth: streaming'
  end
  return 'hearth: ready'
end

--- The statusline component of the current session: its model, its
--- reasoning effort and how much of the model's context is left ("o3 · high ·
--- 62% context left"); '' without a session.
function M.session_line()
  return options.line(S.current and S.sessions[S.current] or nil)
end

local function session(id)
  local s = S.sessions[id]
  if not s then
    -- turns: the agent's prompt number -> the mark of its "## You" block
    s = { id = id, chat = chat.new(id), turn = nil, queue = {}, turns = {}, modes = nil, mode = nil, questions = {} }
    S.sessions[id] = s
  end
  return s
end

function M.current_session()
  return S.current and S.sessions[S.current] or nil
end

local function set_modes(s, modes)
  modes = nn(modes)
  if type(modes) == 'table' then
    s.modes = nn(modes.availableModes)
    s.mode = nn(modes.currentModeId) or s.mode
  end
end

-- set_commands keeps the slash commands the agent offers for session s
-- (available_commands_update replaces the whole list): :Hearth /… completes
-- them and :HearthStatus lists them.
local function set_commands(s, list)
  list = nn(list)
  if type(list) ~= 'table' then
    return
  end
  local cmds = {}
  for _, c in ipairs(list) do
    c = nn(c)
    if type(c) == 'table' and type(nn(c.name)) == 'string' and c.name ~= '' then
      table.insert(cmds, { name = c.name, description = nn(c.description) or '' })
    end
  end
  s.commands = cmds
  changed()
end

--- The slash commands the agent offered for the current session (the last
--- available_commands_update), as { name =, description = } tables.
function M.commands()
  local s = M.current_session()
  return (s and s.commands) or {}
end

---------------------------------------------------------------------------
-- Messages from the agent
---------------------------------------------------------------------------

local function on_update(params)
  if type(params) ~= 'table' then
    return
  end
  local s = S.sessions[nn(params.sessionId)]
  local u = nn(params.update)
  if not s or type(u) ~= 'table' then
    return -- a session this editor does not show
  end
  local kind = nn(u.sessionUpdate)
  if kind == 'agent_message_chunk' then
    s.chat:agent_text(chat.content_text(u.content))
  elseif kind == 'agent_thought_chunk' then
    s.chat:thought_text(chat.content_text(u.content))
  elseif kind == 'user_message_chunk' then
    local text = chat.content_text(u.content)
    if nn(nn(u.content) or {}).type == 'image' and s.chat.section == 'user' and s.chat.open then
      text = '\n' .. text -- an image of a message is a line of its own
    end
    local meta = nn(u._meta)
    local starts = s.chat.section ~= 'user'
    if type(meta) == 'table' and nn(meta['hearth/rewound']) == true and starts then
      text = '(rewound) ' .. text -- a prompt whose turn /rewind took back
    end
    s.chat:user_text(text)
    local n = type(meta) == 'table' and tonumber(nn(meta['hearth/turn'])) or nil
    if starts and n then
      s.turns[n] = s.chat:user_mark()
    end
  elseif kind == 'tool_call' or kind == 'tool_call_update' then
    local t = s.chat:tool(u, kind == 'tool_call')
    local turn = s.turn
    if t and turn then
      turn.calls[t.id] = true
      if turn.cancelled and nn(u.status) == 'failed' then
        turn.stopped[t.id] = true -- ended by the cancel, as far as anyone can tell
      end
    end
  elseif kind == 'current_mode_update' then
    s.mode = nn(u.currentModeId) or s.mode
    changed()
  elseif kind == 'config_option_update' then
    s.options = options.parse(u.configOptions)
    changed()
  elseif kind == 'usage_update' then
    if options.context_left(u.used, u.size) then
      s.usage = { used = u.used, size = u.size }
      changed()
    end
  elseif kind == 'available_commands_update' then
    set_commands(s, u.availableCommands)
  elseif kind == 'plan' then
    require('hearth.plan').show(s.chat, nn(u.entries))
  end
  -- future kinds are not shown.
end

-- answer_question resolves one permission question once.
local function answer_question(s, q, outcome)
  if q.done then
    return
  end
  q.done = true
  if q.call then
    s.chat:unreveal(q.call, q.revealed)
  end
  S.asking = math.max(0, S.asking - 1)
  for i, x in ipairs(s.questions) do
    if x == q then
      table.remove(s.questions, i)
      break
    end
  end
  q.respond({ outcome = outcome })
  changed()
end

local function find_option(options, kind)
  for _, o in ipairs(options) do
    if nn(o.kind) == kind then
      return o
    end
  end
end

-- ask_permission shows session/request_permission through vim.ui.select.
-- Dismissing the question rejects the call once (when the agent offers
-- that); session/cancel answers open questions "cancelled".
local function ask_permission(params, respond)
  params = params or {}
  local options = nn(params.options) or {}
  local s = S.sessions[nn(params.sessionId)]
  if not s then
    return respond({ outcome = { outcome = 'cancelled' } })
  end
  local label, call = 'a tool', nil
  local tc = nn(params.toolCall)
  if type(tc) == 'table' then
    call = s.chat:tool(tc, false)
    if call then
      label = chat.question(call)
    elseif nn(tc.title) then
      label = chat.visible(tc.title)
    end
  end
  s.chat:flush()
  local q = { respond = respond, done = false, call = call }
  table.insert(s.questions, q)
  S.asking = S.asking + 1
  changed()
  vim.schedule(function()
    if q.done then
      return
    end
    if call then
      -- what the call would do (its diff, its command) is read in the chat
      s.chat:show(M.config.open)
      q.revealed = s.chat:reveal(call)
    end
    local ok, err = pcall(vim.ui.select, options, {
      prompt = 'hearth: allow ' .. label .. '?',
      kind = 'hearth_permission',
      format_item = function(o)
        return tostring(nn(o.name) or nn(o.optionId))
      end,
    }, function(choice)
      if choice then
        answer_question(s, q, { outcome = 'selected', optionId = choice.optionId })
      else
        local reject = find_option(options, 'reject_once')
        if reject then
          answer_question(s, q, { outcome = 'selected', optionId = reject.optionId })
        else
          answer_question(s, q, { outcome = 'cancelled' })
        end
      end
    end)
    if not ok then
      notify('permission prompt failed: ' .. tostring(err), vim.log.levels.ERROR)
      answer_question(s, q, { outcome = 'cancelled' })
    end
  end)
end

local function on_request(method, params, respond)
  if method == 'session/request_permission' then
    ask_permission(params, respond)
  elseif method == 'fs/read_text_file' or method == 'fs/write_text_file' then
    files.handle(method, params, respond)
  else
    -- hearth advertises no terminal capability.
    respond(nil, { code = -32601, message = 'method not found: ' .. tostring(method) })
  end
end

local function on_batch()
  for _, s in pairs(S.sessions) do
    s.chat:flush()
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'HearthUpdate', modeline = false })
end

local function on_exit(client, code, stderr)
  if S.client ~= client then
    return -- an older job
  end
  S.client = nil
  S.phase = 'off'
  S.agent = nil
  local lost = {}
  for _, s in pairs(S.sessions) do
    for _, q in ipairs(s.questions) do
      q.done = true -- the job is gone: nobody to answer
    end
    s.questions = {}
    if s.turn then
      table.insert(lost, s)
    end
    s.loading = nil
  end
  S.asking = 0
  local detail = string.format('hearth acp exited with code %d', code)
  if stderr ~= '' then
    detail = detail .. ': ' .. stderr
  end
  if #lost > 0 then
    notify('the agent went away mid-turn (' .. detail .. '). The answer is incomplete; the next command reconnects.',
      vim.log.levels.ERROR)
  elseif not client.stopping then
    notify('the agent stopped (' .. detail .. '); the next command restarts it.', vim.log.levels.WARN)
  end
  changed()
end

---------------------------------------------------------------------------
-- Connection
---------------------------------------------------------------------------

local function flush_waiters(err)
  local waiters = S.waiters
  S.waiters = {}
  for _, cb in ipairs(waiters) do
    local ok, e = xpcall(function()
      cb(err)
    end, debug.traceback)
    if not ok then
      notify('internal error: ' .. tostring(e), vim.log.levels.ERROR)
    end
  end
end

-- connect runs cb(err) once the agent job is running and initialized,
-- starting it when needed.
function M.connect(cb)
  cb = cb or function() end
  if S.phase == 'ready' and S.client and S.client:running() then
    return cb(nil)
  end
  table.insert(S.waiters, cb)
  if S.phase == 'starting' then
    return
  end
  S.phase = 'starting'
  local client
  client = rpc.new({
    cmd = M.config.cmd,
    env = M.config.env,
    on_notification = function(method, params)
      if method == 'session/update' then
        on_update(params)
      end
    end,
    on_request = on_request,
    on_batch = on_batch,
    on_exit = function(code, stderr)
      on_exit(client, code, stderr)
    end,
    on_error = function(msg)
      notify(msg, vim.log.levels.WARN)
    end,
  })
  S.client = client
  local ok, err = client:start()
  if not ok then
    S.client = nil
    S.phase = 'off'
    local msg = 'cannot start the agent (' .. table.concat(M.config.cmd, ' ') .. '): ' .. tostring(err)
      .. ". Install hearth or set require('hearth').setup{cmd = {...}}"
    changed()
    return flush_waiters(msg)
  end
  changed()
  client:request('initialize', {
    protocolVersion = 1,
    clientCapabilities = { fs = { readTextFile = true, writeTextFile = true }, terminal = false },
    clientInfo = { name = 'hearth.nvim', version = M.version },
  }, function(e, res)
    if S.client ~= client then
      return
    end
    if e then
      S.phase = 'off'
      S.client = nil
      client.stopping = true
      client:stop()
      local msg = 'cannot start the agent: ' .. tostring(nn(e.message) or 'error')
      if e.exited and client:stderr_tail() ~= '' then
        msg = msg .. ': ' .. client:stderr_tail()
      end
      changed()
      return flush_waiters(msg)
    end
    S.phase = 'ready'
    S.agent = res
    changed()
    flush_waiters(nil)
  end)
end

-- request sends one call once connected; cb(err_message, result).
function M.request(method, params, cb)
  M.connect(function(err)
    if err then
      return cb(err)
    end
    S.client:request(method, params, function(e, res)
      if e then
        return cb(tostring(nn(e.message) or 'error'), nil, e)
      end
      cb(nil, res)
    end)
  end)
end

-- stop ends the agent job (the daemon keeps running).
function M.stop()
  if S.client then
    S.client.stopping = true
    S.client:stop()
  end
end

---------------------------------------------------------------------------
-- Sessions and turns
---------------------------------------------------------------------------

-- pairs_list turns { NAME = 'value' } into ACP's [{name, value}], sorted;
-- nil when a value is not a string.
local function pairs_list(t)
  local out = {}
  for k, v in pairs(t or {}) do
    if type(k) ~= 'string' or type(v) ~= 'string' then
      return nil
    end
    table.insert(out, { name = k, value = v })
  end
  table.sort(out, function(a, b)
    return a.name < b.name
  end)
  return out
end

--- The mcp_servers option as ACP's McpServer list (sorted by name) for
--- session/new and session/load, and the entries left out with why.
function M.mcp_servers()
  local servers, problems, names = {}, {}, {}
  local cfg = M.config.mcp_servers
  if cfg ~= nil and type(cfg) ~= 'table' then
    return servers, { 'mcp_servers must be a table keyed by server name' }
  end
  for name in pairs(cfg or {}) do
    table.insert(names, name)
  end
  table.sort(names, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, name in ipairs(names) do
    local s = cfg[name]
    local kind = type(s) == 'table' and (s.type or 'stdio') or nil
    local where = 'mcp_servers.' .. tostring(name)
    if type(name) ~= 'string' or type(s) ~= 'table' then
      table.insert(problems, where .. ' must be a table under a name')
    elseif kind == 'stdio' then
      local env = pairs_list(s.env)
      if type(s.command) ~= 'string' or s.command == '' then
        table.insert(problems, where .. ': command must be a program')
      elseif s.args ~= nil and type(s.args) ~= 'table' then
        table.insert(problems, where .. ': args must be a list of strings')
      elseif not env then
        table.insert(problems, where .. ': env must map names to strings')
      else
        table.insert(servers, { name = name, command = s.command, args = s.args or {}, env = env })
      end
    elseif kind == 'http' or kind == 'sse' then
      local headers = pairs_list(s.headers)
      if type(s.url) ~= 'string' or not s.url:match('^https?://') then
        table.insert(problems, where .. ': url must be an http(s) URL')
      elseif not headers then
        table.insert(problems, where .. ': headers must map names to strings')
      else
        table.insert(servers, { type = kind, name = name, url = s.url, headers = headers })
      end
    else
      table.insert(problems, where .. ': unknown type ' .. vim.inspect(kind) .. ' (stdio, http or sse)')
    end
  end
  return servers, problems
end

-- session_mcp is the servers to send, telling the user what was left out.
local function session_mcp()
  local servers, problems = M.mcp_servers()
  for _, p in ipairs(problems) do
    notify(p .. '; left out', vim.log.levels.WARN)
  end
  return servers
end

local function new_session(cb)
  M.request('session/new', { cwd = vim.fn.getcwd(), mcpServers = session_mcp() }, function(err, res)
    if err then
      notify('could not create a session: ' .. err, vim.log.levels.ERROR)
      return cb and cb(err)
    end
    if type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      notify('could not create a session: the agent answered without a sessionId', vim.log.levels.ERROR)
      return cb and cb('no sessionId')
    end
    local s = M._adopt(res, vim.fn.getcwd())
    if cb then
      cb(nil, s)
    end
  end)
end

-- _adopt makes the session of a session/new or session/fork answer the
-- current one (checkpoints.lua forks).
function M._adopt(res, cwd)
  local s = session(res.sessionId)
  s.cwd = cwd
  set_modes(s, res.modes)
  s.options = options.parse(res.configOptions)
  S.current = s.id
  changed()
  return s
end

-- ensure_session gives cb the current session, creating one when there is
-- none; calls made while it is being created share it.
local creating = nil
local function ensure_session(cb)
  local s = M.current_session()
  if s then
    return cb(nil, s)
  end
  if creating then
    table.insert(creating, cb)
    return
  end
  creating = { cb }
  new_session(function(err, ns)
    local list = creating
    creating = nil
    for _, f in ipairs(list) do
      f(err, ns)
    end
  end)
end

--- :HearthNew — a new session in the current directory, in its own buffer.
function M.new_session(cb)
  new_session(function(err, s)
    if not err then
      s.chat:show(M.config.open)
    end
    if cb then
      cb(err, s)
    end
  end)
end

--- :HearthImage {path} — attach an image file to the next prompt;
--- :HearthImage! forgets the attached ones. Returns true when attached.
function M.attach_image(path, clear)
  if clear then
    S.images = {}
    notify('no image attached')
    return true
  end
  if type(path) ~= 'string' or path:match('^%s*$') then
    if #S.images == 0 then
      notify('no image attached; :HearthImage {path} attaches one')
    else
      local names = {}
      for _, im in ipairs(S.images) do
        table.insert(names, im.name)
      end
      notify('attached to the next prompt: ' .. table.concat(names, ', '))
    end
    return false
  end
  local im, err = image.load(path)
  if not im then
    notify(err, vim.log.levels.ERROR)
    return false
  end
  table.insert(S.images, im)
  notify(string.format('%s attached to the next prompt (%s)', im.name, image.size(im.bytes)))
  changed()
  return true
end

-- mark_cancelled shows "[cancelled]" on the calls a cancelled turn left
-- unfinished, and on those that failed once :HearthCancel was sent: the
-- agent reports a command it stopped as failed, but what happened is that
-- the user cancelled it. A call that failed before the cancel stays failed.
local function mark_cancelled(s, turn)
  for id in pairs(turn.calls) do
    local t = s.chat.tools[id]
    local st = t and t.status
    if t and (turn.stopped[id] or (st ~= 'completed' and st ~= 'failed')) then
      s.chat:set_status(t, 'cancelled')
    end
  end
end

--- steering_supported says whether the agent advertised _session/steering
--- (initialize's _meta.steering.supported).
function M.steering_supported()
  local meta = nn(S.agent and S.agent._meta)
  local st = type(meta) == 'table' and nn(meta.steering) or nil
  return type(st) == 'table' and nn(st.supported) == true
end

-- steer gives session s's running turn more input (_session/steering) and
-- shows it where it landed: "injected" (the model reads it in the answer
-- that streams) and "startedNewTurn" (the turn had ended: it runs as a
-- turn of its own) as a "## You" block at the end of the chat, the answer
-- going on below it, as session/load replays it; "failed" as a note.
local function steer(s, blocks, shown, cb)
  S.client:request('_session/steering', { sessionId = s.id, prompt = blocks }, function(err, res)
    local outcome = err and 'failed' or tostring(nn(res and res.outcome) or 'failed')
    if outcome == 'injected' or outcome == 'startedNewTurn' then
      s.chat:end_message()
      s.chat:user_text(shown)
      s.chat:end_message()
    else
      local why = err and (' (' .. tostring(nn(err.message) or 'error') .. ')') or ''
      s.chat:note('✗ steering not delivered' .. why .. ': ' .. chat.visible(shown)
        .. ' — :HearthQueue sends it as the next prompt')
    end
    changed()
    if cb then
      cb(outcome, s)
    end
  end)
end

-- start_turn shows turn's prompt as a "## You" block and makes it the
-- session's running turn.
local function start_turn(s, turn)
  s.chat:show(M.config.open)
  s.chat:user_text(turn.shown)
  turn.mark = s.chat:user_mark()
  s.chat:end_message()
  s.turn = turn
  s.last_stop = nil
  changed()
end

-- end_turn shows how turn ended (its session/prompt answer, or err) and
-- starts the next queued one: the agent runs queued prompts in order.
local function end_turn(s, turn, err, res)
  if s.turn ~= turn then
    -- a queued prompt the agent answered before it ran: an error
    for i, q in ipairs(s.queue) do
      if q == turn then
        table.remove(s.queue, i)
        break
      end
    end
    local msg = err and tostring(nn(err.message) or 'error') or tostring(nn(res and res.stopReason))
    notify('the queued prompt did not run: ' .. msg, vim.log.levels.ERROR)
    return msg
  end
  s.turn = nil
  s.chat:end_message()
  if err then
    if err.exited then
      s.chat:note('✗ connection lost: the agent went away mid-turn')
      s.last_stop = 'disconnected'
      s.queue = {} -- their requests went with the job
    else
      local msg = tostring(nn(err.message) or 'error')
      s.chat:note('✗ error: ' .. msg)
      s.last_stop = 'error'
      notify('the turn failed: ' .. msg, vim.log.levels.ERROR)
    end
  else
    s.last_stop = nn(res and res.stopReason) or 'end_turn'
    local meta = nn(res and res._meta)
    local n = type(meta) == 'table' and tonumber(nn(meta['hearth/turn'])) or nil
    if n and turn.mark then
      s.turns[n] = turn.mark -- the agent's number for this prompt
    end
    if s.last_stop == 'cancelled' then
      mark_cancelled(s, turn)
    end
    if s.last_stop ~= 'end_turn' then
      s.chat:note('⏹ ' .. s.last_stop)
    end
  end
  if #s.queue > 0 then
    start_turn(s, table.remove(s.queue, 1))
  end
  changed()
  return s.last_stop
end

--- :Hearth {prompt} — send a prompt to the current session (a new one when
--- there is none) and stream the answer into its chat buffer, with the
--- images :HearthImage attached. While a turn runs the prompt steers it
--- (_session/steering); with queue (:HearthQueue) it is sent as a prompt
--- that the agent runs after the running turn. cb(stop reason, session)
--- when its turn ends; a steer's cb gets the steering outcome.
function M.prompt(text, cb, queue)
  if (type(text) ~= 'string' or text:match('^%s*$')) and #S.images > 0 then
    text = '' -- the attached images are the prompt
  elseif type(text) ~= 'string' or text:match('^%s*$') then
    vim.ui.input({ prompt = queue and 'hearth (queue)> ' or 'hearth> ' }, function(input)
      if input and not input:match('^%s*$') then
        M.prompt(input, cb, queue)
      end
    end)
    return
  end
  local function send(s)
    local blocks = {}
    if text ~= '' then
      table.insert(blocks, { type = 'text', text = text })
    end
    local shown = {}
    if text ~= '' then
      shown[1] = text
    end
    for _, im in ipairs(S.images) do
      table.insert(blocks, { type = 'image', mimeType = im.mimeType, data = im.data })
      table.insert(shown, image.describe(im.mimeType, im.data, im.name))
    end
    S.images = {}
    shown = table.concat(shown, '\n')
    if s.turn and not queue and M.steering_supported() then
      return steer(s, blocks, shown, cb)
    end
    local turn = { text = text, shown = shown, calls = {}, stopped = {} }
    s.queue = s.queue or {}
    if s.turn then
      table.insert(s.queue, turn)
      notify(string.format('queued: runs after the current turn (%d waiting)', #s.queue))
      changed()
    else
      start_turn(s, turn)
    end
    S.client:request('session/prompt', {
      sessionId = s.id,
      prompt = blocks,
    }, function(err, res)
      local stop = end_turn(s, turn, err, res)
      pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'HearthTurnDone', modeline = false })
      if cb then
        cb(stop, s)
      end
    end)
  end
  M.connect(function(err)
    if err then
      notify(err, vim.log.levels.ERROR)
      return
    end
    ensure_session(function(e, s)
      if not e then
        send(s)
      end
    end)
  end)
end

--- :HearthQueue {prompt} — a prompt that runs after the running turn (at
--- once when none runs).
function M.queue(text, cb)
  M.prompt(text, cb, true)
end

--- :HearthCancel — cancel the current session's turn (or sid's); open
--- permission questions are answered "cancelled".
function M.cancel(sid)
  local s = sid and S.sessions[sid] or M.current_session()
  if not s or (not s.turn and #s.questions == 0) then
    notify('nothing to cancel')
    return false
  end
  while #s.questions > 0 do
    answer_question(s, s.questions[1], { outcome = 'cancelled' })
  end
  if s.turn and S.client then
    s.turn.cancelled = true
    S.client:notify('session/cancel', { sessionId = s.id })
  end
  changed()
  return true
end

-- here says whether a stored session is the current directory's.
local function here(item)
  local cwd = nn(item.cwd)
  return type(cwd) == 'string' and vim.fn.fnamemodify(cwd, ':p') == vim.fn.fnamemodify(vim.fn.getcwd(), ':p')
end

-- format_session is one line of :HearthResume's list: a mark on the
-- current directory's sessions, when the session was last used, in local
-- time ("today 14:02"), its title (the daemon's: the start of its first
-- prompt) or else its id, and its directory.
local function format_session(item)
  local title = nn(item.title)
  local updated = nn(item.updatedAt)
  local t = when.parse(updated)
  local cwd = nn(item.cwd)
  cwd = type(cwd) == 'string' and vim.fn.fnamemodify(cwd, ':~') or ''
  local at = t and when.human(t) or tostring(updated or '')
  return chat.visible(string.format('%s %s  %s  %s', here(item) and '●' or ' ', at, title or item.sessionId, cwd))
end

local function load(item, cb)
  local s = session(item.sessionId)
  if s.turn then
    notify('that session is streaming a turn right now', vim.log.levels.WARN)
    return
  end
  s.cwd = nn(item.cwd) or vim.fn.getcwd()
  s.chat:reset()
  s.turns = {}
  s.loading = true
  S.current = s.id
  s.chat:show(M.config.open)
  changed()
  S.client:request('session/load', { sessionId = s.id, cwd = s.cwd, mcpServers = session_mcp() }, function(err, res)
    s.loading = nil
    s.chat:end_message()
    if err then
      if not err.exited then
        notify('could not resume the session: ' .. tostring(nn(err.message)), vim.log.levels.ERROR)
      end
    else
      set_modes(s, res and res.modes)
      s.options = options.parse(res and res.configOptions)
      s.chat.section = nil -- the next prompt starts a "## You" block
    end
    changed()
    if cb then
      cb(err and tostring(nn(err.message)) or nil, s)
    end
  end)
end

--- :HearthResume [id] — pick a stored session (vim.ui.select over
--- session/list) and replay it into its chat buffer with session/load.
function M.resume(id, cb)
  M.request('session/list', vim.empty_dict(), function(err, res)
    if err then
      notify('could not list sessions: ' .. err, vim.log.levels.ERROR)
      return
    end
    local items = nn(res.sessions) or {}
    if id and id ~= '' then
      for _, item in ipairs(items) do
        if item.sessionId == id then
          return load(item, cb)
        end
      end
      return load({ sessionId = id, cwd = vim.fn.getcwd() }, cb)
    end
    if #items == 0 then
      notify('no stored sessions')
      return
    end
    -- the current directory's first, each group in the daemon's order
    local mine, others = {}, {}
    for _, item in ipairs(items) do
      table.insert(here(item) and mine or others, item)
    end
    vim.list_extend(mine, others)
    vim.ui.select(mine, {
      prompt = 'Resume hearth session',
      kind = 'hearth_session',
      format_item = format_session,
    }, function(choice)
      if choice then
        load(choice, cb)
      end
    end)
  end)
end

--- :HearthMode [id] — switch the session mode (session/set_mode); without
--- an id, pick from the modes the agent offered.
function M.set_mode(id, cb)
  local s = M.current_session()
  if not s then
    notify('no session yet: :Hearth or :HearthNew first', vim.log.levels.WARN)
    return
  end
  local function apply(mode_id)
    M.request('session/set_mode', { sessionId = s.id, modeId = mode_id }, function(err)
      if err then
        notify('could not switch to mode ' .. mode_id .. ': ' .. err, vim.log.levels.ERROR)
      else
        s.mode = mode_id
        notify('mode: ' .. mode_id)
        changed()
      end
      if cb then
        cb(err, s.mode)
      end
    end)
  end
  if id and id ~= '' then
    return apply(id)
  end
  local modes = s.modes or {}
  if #modes == 0 then
    notify('the agent offers no modes for this session', vim.log.levels.WARN)
    return
  end
  vim.ui.select(modes, {
    prompt = 'hearth mode',
    kind = 'hearth_mode',
    format_item = function(m)
      local cur = (m.id == s.mode) and ' (current)' or ''
      local desc = nn(m.description)
      return tostring(nn(m.name) or m.id) .. cur .. (desc and (' — ' .. desc) or '')
    end,
  }, function(choice)
    if choice then
      apply(choice.id)
    end
  end)
end

--- :HearthModel [model] and :HearthEffort [level] — choose the session's
--- model or its reasoning effort (session/set_config_option); without an
--- argument, pick from what the agent offers.
local function choose(category, value, cb)
  local s = M.current_session()
  if not s then
    notify('no session yet: :Hearth or :HearthNew first', vim.log.levels.WARN)
    return
  end
  options.choose(M.request, notify, s, category, value, function(err, v)
    changed()
    if cb then
      cb(err, v)
    end
  end)
end

function M.set_model(value, cb)
  choose('model', value, cb)
end

function M.set_effort(value, cb)
  choose('thought_level', value, cb)
end

-- wrap breaks line at spaces into lines of at most width display cells,
-- the later ones indented; a word wider than that has a line of its own.
local function wrap(line, width, out)
  local indent = '    '
  local cur = nil
  for space, word in line:gmatch('(%s*)(%S+)') do
    if cur == nil then
      cur = space .. word
    elseif vim.fn.strdisplaywidth(cur .. space .. word) <= width then
      cur = cur .. space .. word
    else
      table.insert(out, cur)
      cur = indent .. word
    end
  end
  table.insert(out, cur or '')
end

--- :HearthStatus — the daemon and its workspaces' connections.
function M.status(cb)
  M.request('_hearth/status', vim.empty_dict(), function(err, st)
    if err then
      notify('status failed: ' .. err, vim.log.levels.ERROR)
      if cb then
        cb(err)
      end
      return
    end
    local lines = {
      string.format('hearth %s  pid %s  %s', tostring(nn(st.version)), tostring(nn(st.pid)), M.statusline()),
    }
    local conn = 'socket ' .. tostring(nn(st.socket))
    if (nn(st.model) or '') ~= '' then
      conn = conn .. '  model ' .. st.model
    end
    if (nn(st.baseUrl) or '') ~= '' then
      conn = conn .. '  api ' .. st.baseUrl
    end
    table.insert(lines, conn)
    local s = M.current_session()
    if s then
      local more = options.line(s)
      table.insert(lines, 'session ' .. s.id .. (s.mode and ('  mode ' .. s.mode) or '') .. (more ~= '' and ('  ' .. more) or ''))
      for _, c in ipairs(s.commands or {}) do
        table.insert(lines, '  /' .. c.name .. (c.description ~= '' and ('  ' .. c.description) or ''))
      end
    end
    for _, w in ipairs(nn(st.workspaces) or {}) do
      table.insert(lines, string.format(
        '%s: %s over %s, %d handshake(s), %d warm-up(s), %d full / %d incremental request(s), %s sent, %s saved, last turn %d ms',
        tostring(nn(w.root)), tostring(nn(w.state)), tostring(nn(w.transport)), nn(w.handshakes) or 0,
        nn(w.warmups) or 0, nn(w.fullRequests) or 0, nn(w.incrementalRequests) or 0,
        image.size(tonumber(nn(w.bytesSent)) or 0), image.size(tonumber(nn(w.bytesSaved)) or 0),
        nn(w.lastTurnMs) or 0))
    end
    if #(nn(st.workspaces) or {}) == 0 then
      table.insert(lines, 'no open workspaces')
    end
    -- the message area would break long lines mid-word at the screen's edge
    local wrapped = {}
    for _, l in ipairs(lines) do
      wrap(l, math.max(vim.o.columns - 1, 20), wrapped)
    end
    vim.notify(table.concat(wrapped, '\n'), vim.log.levels.INFO)
    if cb then
      cb(nil, st)
    end
  end)
end

--- :HearthRules [revoke ID|all] — the workspaces' kept "always allow" rules
--- (a command prefix such as `go test`, or a file), or revoke one or all.
--- cb(err, result) gets _hearth/rules's or _hearth/rules/revoke's answer.
function M.rules(args, cb)
  args = vim.trim(args or '')
  local function done(err, res)
    if cb then
      cb(err, res)
    end
  end
  local id, all = args:match('^revoke%s+(%d+)$'), args:match('^revoke%s+all$') ~= nil
  if args ~= '' and not id and not all then
    notify('usage: :HearthRules [revoke ID|all]', vim.log.levels.WARN)
    return done('usage')
  end
  if id or all then
    local params = all and { all = true } or { id = tonumber(id) }
    M.request('_hearth/rules/revoke', params, function(err, res)
      if err then
        notify('revoke failed: ' .. err, vim.log.levels.ERROR)
        return done(err)
      end
      notify(string.format('revoked %d rule(s)', nn(res.revoked) or 0), vim.log.levels.INFO)
      done(nil, res)
    end)
    return
  end
  M.request('_hearth/rules', vim.empty_dict(), function(err, res)
    if err then
      notify('rules failed: ' .. err, vim.log.levels.ERROR)
      return done(err)
    end
    local lines = {}
    for _, r in ipairs(nn(res.rules) or {}) do
      table.insert(lines, string.format('%d  %s  %s  %s', nn(r.id) or 0, tostring(nn(r.kind)), tostring(nn(r.pattern)), tostring(nn(r.root))))
    end
    if #lines == 0 then
      lines = { 'no rules: "Always allow" on a command or an edit keeps one' }
    else
      table.insert(lines, ':HearthRules revoke ID (or all) removes them')
    end
    vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
    done(nil, res)
  end)
end

--- :HearthProcesses [kill ID] — the processes the current session's
--- exec_command calls left running (id, command, running or exited, age),
--- or end one and everything it started.
--- cb(err, result) gets _hearth/processes's or _hearth/process/kill's answer.
function M.processes(args, cb)
  args = vim.trim(args or '')
  local function done(err, res)
    if cb then
      cb(err, res)
    end
  end
  local id = args:match('^kill%s+(%d+)$')
  if args ~= '' and not id then
    notify('usage: :HearthProcesses [kill ID]', vim.log.levels.WARN)
    return done('usage')
  end
  local s = M.current_session()
  if not s then
    notify('no session yet: :Hearth or :HearthNew first', vim.log.levels.WARN)
    return done('no session')
  end
  if id then
    M.request('_hearth/process/kill', { sessionId = s.id, processId = tonumber(id) }, function(err, res)
      if err then
        notify('kill failed: ' .. err, vim.log.levels.ERROR)
        return done(err)
      end
      notify('ended process ' .. id, vim.log.levels.INFO)
      done(nil, res)
    end)
    return
  end
  M.request('_hearth/processes', { sessionId = s.id }, function(err, res)
    if err then
      notify('processes failed: ' .. err, vim.log.levels.ERROR)
      return done(err)
    end
    local lines = {}
    for _, p in ipairs(nn(res.processes) or {}) do
      local started = when.parse(nn(p.startedAt))
      table.insert(lines, string.format('%d  %s  %s  %s', nn(p.processId) or 0,
        nn(p.running) and 'running' or 'exited', started and when.age(started) or '?', tostring(nn(p.command))))
    end
    if #lines == 0 then
      lines = { 'no processes: a command exec_command leaves running is listed here' }
    else
      table.insert(lines, ':HearthProcesses kill ID ends one')
    end
    vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
    done(nil, res)
  end)
end

--- :HearthUndo, :HearthRewind [N], :HearthFork: checkpoints.lua.
function M.undo(cb, force)
  require('hearth.checkpoints').undo(M, cb, force)
end

function M.rewind(n, cb, force)
  require('hearth.checkpoints').rewind(M, n, cb, force)
end

function M.fork(n, cb)
  require('hearth.checkpoints').fork(M, n, cb)
end

---------------------------------------------------------------------------
-- Commands
---------------------------------------------------------------------------

local function complete_modes()
  local s = M.current_session()
  local out = {}
  for _, m in ipairs((s and s.modes) or {}) do
    table.insert(out, m.id)
  end
  return out
end

-- complete_prompt offers the session's slash commands for a prompt that is
-- one word starting with '/'.
local function complete_prompt(arg, line)
  local typed = line:match('^%s*%S+%s+(.*)$') or ''
  if not typed:match('^/%S*$') then
    return {}
  end
  local out = {}
  for _, c in ipairs(M.commands()) do
    local word = '/' .. c.name
    if word:sub(1, #typed) == typed then
      table.insert(out, word)
    end
  end
  table.sort(out)
  return out
end

-- A chat buffer's own keys, as a fugitive or help window has them: q closes
-- the window, <C-c> cancels the turn of the buffer's session.
chat.on_buffer = function(buf, sid)
  vim.keymap.set('n', 'q', function()
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.cmd('close')
    end
  end, { buffer = buf, silent = true, desc = 'hearth: close the chat window' })
  vim.keymap.set('n', '<C-c>', function()
    M.cancel(sid)
  end, { buffer = buf, silent = true, desc = "hearth: cancel this session's turn" })
end

function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('Hearth', function(a)
    M.prompt(a.args)
  end, { nargs = '*', complete = complete_prompt, desc = 'hearth: send a prompt' })
  cmd('HearthQueue', function(a)
    M.queue(a.args)
  end, { nargs = '*', desc = 'hearth: send a prompt that runs after the running turn' })
  cmd('HearthUndo', function(a)
    M.undo(nil, a.bang)
  end, { nargs = 0, bang = true, desc = "hearth: put back the files of the session's last turn (!: without asking)" })
  cmd('HearthRewind', function(a)
    M.rewind(tonumber(a.args), nil, a.bang)
  end, { nargs = '?', bang = true, desc = 'hearth: files and conversation back to before a prompt (!: without asking)' })
  cmd('HearthFork', function(a)
    M.fork(tonumber(a.args))
  end, { nargs = '?', desc = 'hearth: a new session with this one\'s history (before prompt N)' })
  cmd('HearthNew', function()
    M.new_session()
  end, { nargs = 0, desc = 'hearth: start a new session' })
  cmd('HearthResume', function(a)
    M.resume(a.args)
  end, { nargs = '?', desc = 'hearth: resume a stored session' })
  cmd('HearthCancel', function()
    M.cancel()
  end, { nargs = 0, desc = 'hearth: cancel the running turn' })
  cmd('HearthStatus', function()
    M.status()
  end, { nargs = 0, desc = 'hearth: daemon and connection status' })
  cmd('HearthRules', function(a)
    M.rules(a.args)
  end, { nargs = '*', desc = 'hearth: list the kept "always allow" rules, or revoke one or all' })
  cmd('HearthProcesses', function(a)
    M.processes(a.args)
  end, { nargs = '*', desc = "hearth: list the current session's processes, or end one" })
  cmd('HearthImage', function(a)
    M.attach_image(a.args, a.bang)
  end, { nargs = '?', bang = true, complete = 'file', desc = 'hearth: attach an image to the next prompt' })
  cmd('HearthMode', function(a)
    M.set_mode(a.args)
  end, { nargs = '?', complete = complete_modes, desc = 'hearth: switch the session mode' })
  cmd('HearthModel', function(a)
    M.set_model(a.args)
  end, {
    nargs = '?',
    complete = function()
      return options.values(M.current_session(), 'model')
    end,
    desc = "hearth: choose the session's model",
  })
  cmd('HearthEffort', function(a)
    M.set_effort(a.args)
  end, {
    nargs = '?',
    complete = function()
      return options.values(M.current_session(), 'thought_level')
    end,
    desc = "hearth: choose the model's reasoning effort",
  })
end

--- setup{cmd = {'hearth', 'acp'}, env = {...}, open = 'botright vsplit', mcp_servers = {...}}
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  if opts and opts.cmd then
    M.config.cmd = opts.cmd -- lists are replaced, not merged
  end
  if opts and opts.mcp_servers then
    M.config.mcp_servers = opts.mcp_servers -- replaced: {} removes them all
  end
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'acp' }
  end
  M.create_commands()
end

return M
