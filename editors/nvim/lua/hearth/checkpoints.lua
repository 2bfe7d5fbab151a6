-- hearth.checkpoints: taking a session's work back and branching it off —
-- :HearthUndo (_hearth/undo: the files of the last turn that changed
-- any), :HearthRewind (_hearth/rewind: files and conversation back to
-- before a prompt) and :HearthFork (session/fork: a new session with this
-- one's history). What each did is shown in the session's chat and said
-- in a notification; conflicts (files changed since by someone else, left
-- as they are) are named, with their diffs when the agent sends them.
local chat = require('hearth.chat')
local nn = require('hearth.rpc').nn

local M = {}

local function notify(msg, level)
  vim.notify('hearth: ' .. msg, level or vim.log.levels.INFO)
end

local function list(v)
  v = nn(v)
  return type(v) == 'table' and v or {}
end

-- result_lines are the chat lines of an undo's or a rewind's result: the
-- files by what happened to them, then each conflict's diff (what the turn
-- left against what is there now), its lines prefixed like a tool's output
-- so that they fold.
function M.result_lines(what, res)
  local lines = { '⟲ ' .. what .. ': ' .. chat.visible(nn(res.message) or '') }
  local groups = {
    { 'restored', 'restored' }, { 'removed', 'removed (the turn created them)' },
    { 'conflicts', 'conflicts (changed since, left as they are)' }, { 'failed', 'could not be restored' },
    { 'notRestorable', 'not restorable' },
  }
  for _, g in ipairs(groups) do
    local paths = list(res[g[1]])
    if #paths > 0 then
      local shown = {}
      for _, p in ipairs(paths) do
        table.insert(shown, chat.visible(tostring(nn(p))))
      end
      table.insert(lines, '  ' .. g[2] .. ': ' .. table.concat(shown, ', '))
    end
  end
  for _, d in ipairs(list(res.conflictDiffs)) do
    d = nn(d) or {}
    table.insert(lines, '⏺ conflict ' .. chat.visible(tostring(nn(d.path) or '?')))
    for _, l in ipairs(vim.split(tostring(nn(d.diff) or ''), '\n', { plain = true, trimempty = true })) do
      table.insert(lines, chat.OUT .. chat.visible(l))
    end
  end
  return lines
end

-- summary is the one-line notification of an undo's or rewind's result.
local function summary(what, res)
  local parts = {}
  for _, k in ipairs({ 'restored', 'removed', 'conflicts', 'failed', 'notRestorable' }) do
    local n = #list(res[k])
    if n > 0 then
      table.insert(parts, string.format('%d %s', n, k == 'notRestorable' and 'not restorable' or k))
    end
  end
  if #parts == 0 then
    return what .. ': ' .. tostring(nn(res.message) or 'nothing changed')
  end
  return what .. ': ' .. table.concat(parts, ', ')
end

-- show puts a result in session s's chat and notifies its summary; a
-- result with conflicts warns.
local function show(h, s, what, res)
  s.chat:note('')
  for _, l in ipairs(M.result_lines(what, res)) do
    s.chat:note(l)
  end
  local level = (#list(res.conflicts) + #list(res.failed) > 0) and vim.log.levels.WARN or vim.log.levels.INFO
  notify(summary(what, res), level)
  h._changed()
end

local function current(h, done)
  local s = h.current_session()
  if not s then
    notify('no session yet: :Hearth or :HearthNew first', vim.log.levels.WARN)
    done('no session')
  end
  return s
end

-- MAX_LISTED bounds the files a confirmation names, so that it fits the
-- screen; the rest are counted.
local MAX_LISTED = 20

-- add_paths appends paths to lines, indented, at most MAX_LISTED of them
-- in all (state.shown counts them); total is how many there are (more
-- than paths when the agent bounded them).
local function add_paths(lines, paths, total, state)
  for _, p in ipairs(paths) do
    if state.shown >= MAX_LISTED then
      break
    end
    state.shown = state.shown + 1
    table.insert(lines, '    ' .. chat.visible(tostring(nn(p))))
  end
  state.total = state.total + math.max(total or #paths, #paths)
end

-- ask asks question (lines) with Yes/No: true for Yes.
local function ask(lines)
  return vim.fn.confirm(table.concat(lines, '\n'), '&Yes\n&No', 2, 'Question') == 1
end

-- more_line counts the files a confirmation did not name.
local function more_line(lines, state)
  if state.total > state.shown then
    table.insert(lines, string.format('    … and %d more', state.total - state.shown))
  end
end

--- undo_question is :HearthUndo's confirmation: the files a dry run of
--- _hearth/undo (preview) says an undo would restore and remove.
function M.undo_question(preview)
  local lines = { "hearth: undo the file changes of the session's last turn?" }
  local state = { shown = 0, total = 0 }
  for _, g in ipairs({ { 'restored', 'To restore:' }, { 'removed', 'To remove (created by that turn):' },
    { 'notRestorable', 'Not restorable (left as they are):' } }) do
    local paths = list(preview[g[1]])
    if #paths > 0 then
      table.insert(lines, g[2])
      add_paths(lines, paths, #paths, state)
    end
  end
  more_line(lines, state)
  table.insert(lines, 'A file changed since by someone else keeps its text (a conflict).')
  return lines
end

--- rewind_question is :HearthRewind's confirmation of a rewind to before
--- prompt n: each turn it takes back with its files, from the listing.
function M.rewind_question(n, listing)
  local lines = { string.format('hearth: rewind the files and the conversation to before prompt %d?', n) }
  local state = { shown = 0, total = 0 }
  for _, t in ipairs(list(listing and listing.turns)) do
    t = nn(t) or {}
    if (tonumber(nn(t.turn)) or 0) >= n and not nn(t.rewound) then
      table.insert(lines, M.format_turn(t))
      add_paths(lines, list(t.paths), tonumber(nn(t.files)) or 0, state)
    end
  end
  more_line(lines, state)
  table.insert(lines, 'A file changed since by someone else keeps its text (a conflict).')
  return lines
end

--- :HearthUndo[!] — put back the files of the current session's last turn
--- that changed any, once the user confirmed the files a dry run lists
--- (force: without asking). cb(err, result) gets _hearth/undo's answer
--- ('dismissed' when the user said no).
function M.undo(h, cb, force)
  local function done(err, res)
    if cb then
      cb(err, res)
    end
  end
  local s = current(h, done)
  if not s then
    return
  end
  local function run()
    h.request('_hearth/undo', { sessionId = s.id }, function(err, res)
      if err then
        notify('undo failed: ' .. err, vim.log.levels.ERROR)
        return done(err)
      end
      show(h, s, 'undo', res)
      done(nil, res)
    end)
  end
  if force then
    return run()
  end
  h.request('_hearth/undo', { sessionId = s.id, dryRun = true }, function(err, preview)
    if err then
      notify('undo failed: ' .. err, vim.log.levels.ERROR)
      return done(err)
    end
    if #list(preview.restored) + #list(preview.removed) + #list(preview.notRestorable) == 0 then
      show(h, s, 'undo', preview) -- nothing to undo: its message says so
      return done(nil, preview)
    end
    if not ask(M.undo_question(preview)) then
      return done('dismissed')
    end
    run()
  end)
end

-- format_turn is one line of :HearthRewind's list.
function M.format_turn(t)
  local files = tonumber(nn(t.files)) or 0
  return chat.visible(string.format('%d. %s  (%d file%s changed)%s', tonumber(nn(t.turn)) or 0,
    tostring(nn(t.prompt) or ''), files, files == 1 and '' or 's', nn(t.rewound) and '  [rewound]' or ''))
end

--- :HearthRewind[!] [N] — files and conversation back to before the
--- current session's Nth prompt (the agent's numbering), once the user
--- confirmed the turns and files it takes back (force: without asking);
--- without N, the turns are listed (_hearth/rewind without a turn) to pick
--- from. cb(err, result) ('dismissed' when the user said no).
function M.rewind(h, n, cb, force)
  local function done(err, res)
    if cb then
      cb(err, res)
    end
  end
  local s = current(h, done)
  if not s then
    return
  end
  local function run(turn, listing)
    if not force and not ask(M.rewind_question(turn, listing)) then
      return done('dismissed')
    end
    h.request('_hearth/rewind', { sessionId = s.id, turn = turn }, function(err, res)
      if err then
        notify('rewind failed: ' .. err, vim.log.levels.ERROR)
        return done(err)
      end
      show(h, s, 'rewind to before prompt ' .. turn, res)
      done(nil, res)
    end)
  end
  if n and force then
    return run(n)
  end
  h.request('_hearth/rewind', { sessionId = s.id }, function(err, res)
    if err then
      notify('rewind failed: ' .. err, vim.log.levels.ERROR)
      return done(err)
    end
    if n then
      return run(n, res)
    end
    local turns = list(res.turns)
    if #turns == 0 then
      notify('nothing to rewind: this session has no prompts yet')
      return done(nil, res)
    end
    vim.ui.select(turns, {
      prompt = 'hearth: rewind files and conversation to before which prompt?',
      kind = 'hearth_rewind',
      format_item = M.format_turn,
    }, function(choice)
      if choice then
        run(tonumber(nn(choice.turn)), res)
      else
        done('dismissed')
      end
    end)
  end)
end

--- fork_supported says whether initialize advertised session/fork
--- (agentCapabilities.sessionCapabilities.fork).
function M.fork_supported(agent)
  local caps = nn(agent and agent.agentCapabilities)
  local sc = type(caps) == 'table' and nn(caps.sessionCapabilities) or nil
  return type(sc) == 'table' and nn(sc.fork) ~= nil
end

--- fork_from_turn_supported says whether session/fork takes
--- _meta["hearth/turn"] (fork._meta["hearth/fromTurn"]).
function M.fork_from_turn_supported(agent)
  if not M.fork_supported(agent) then
    return false
  end
  local meta = nn(nn(agent.agentCapabilities.sessionCapabilities.fork)._meta)
  return type(meta) == 'table' and nn(meta['hearth/fromTurn']) == true
end

--- :HearthFork [N] — a new session with the current one's history
--- (session/fork), made current, its chat holding the history it branched
--- from; with N, the history before the session's Nth prompt (when the
--- agent forks from a prompt). cb(err, new session).
function M.fork(h, n, cb)
  local function done(err, ns)
    if cb then
      cb(err, ns)
    end
  end
  local s = current(h, done)
  if not s then
    return
  end
  h.connect(function(cerr)
    if cerr then
      notify(cerr, vim.log.levels.ERROR)
      return done(cerr)
    end
    if not M.fork_supported(h._state.agent) then
      notify('this agent does not offer fork (session/fork)', vim.log.levels.WARN)
      return done('unsupported')
    end
    local history = s.chat:lines()
    local params = { sessionId = s.id, cwd = s.cwd or vim.fn.getcwd(), mcpServers = h.mcp_servers() }
    if n then
      if not M.fork_from_turn_supported(h._state.agent) then
        notify('this agent does not fork from a given prompt; :HearthFork forks the whole session', vim.log.levels.WARN)
        return done('unsupported')
      end
      history = s.turns[n] and s.chat:lines_before(s.turns[n])
      if not history then
        notify('prompt ' .. n .. ' is not in this chat (the agent numbers the prompts it answered)', vim.log.levels.WARN)
        return done('unknown prompt')
      end
      params._meta = { ['hearth/turn'] = n }
    end
    local cwd = params.cwd
    h.request('session/fork', params, function(err, res)
      if err then
        notify('fork failed: ' .. err, vim.log.levels.ERROR)
        return done(err)
      end
      if type(res) ~= 'table' or type(nn(res.sessionId)) ~= 'string' then
        notify('fork failed: the agent answered without a sessionId', vim.log.levels.ERROR)
        return done('no sessionId')
      end
      local ns = h._adopt(res, cwd)
      ns.chat:_edit(function()
        ns.chat:_append(#history > 0 and history or { '' })
      end)
      ns.chat:note('⑂ forked from session ' .. s.id .. (n and (' before prompt ' .. n) or '') .. ': this is session ' .. ns.id)
      ns.chat.section = nil -- the next prompt starts a "## You" block
      ns.chat:show(h.config.open)
      notify('forked: session ' .. ns.id)
      h._changed()
      done(nil, ns)
    end)
  end)
end

return M
