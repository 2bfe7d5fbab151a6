-- hearth.rpc: one `hearth acp` job speaking JSON-RPC 2.0 as newline-delimited
-- JSON on its stdin/stdout. Requests carry integer ids; the agent's own
-- requests (session/request_permission) and notifications (session/update)
-- are handed to the callbacks given to new().
local M = {}

local json = {}
if vim.json and vim.json.encode and vim.json.decode then
  json.encode, json.decode = vim.json.encode, vim.json.decode
else -- very old builds: the Vimscript codec
  json.encode, json.decode = vim.fn.json_encode, vim.fn.json_decode
end
M.json = json

-- nn maps JSON null (vim.NIL) to nil.
function M.nn(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

local Client = {}
Client.__index = Client

-- new creates a client; start() launches the job. opts:
--   cmd             list: the command line (e.g. {'hearth', 'acp'})
--   env             table|nil: extra environment for the job
--   on_notification function(method, params)
--   on_request      function(method, params, respond) where respond(result, err)
--   on_batch        function(): after each chunk of stdout was handled
--   on_exit         function(code, stderr_tail): the job ended
--   on_error        function(msg): a message that could not be handled
function M.new(opts)
  return setmetatable({
    opts = opts,
    job = nil,
    next_id = 0,
    pending = {}, -- id -> {method, cb}
    partial = '', -- the incomplete last line of stdout so far
    stderr = {}, -- last lines of stderr, for error messages
    exited = false,
  }, Client)
end

function Client:start()
  local opts = self.opts
  local job_opts = {
    on_stdout = function(_, data)
      self:feed(data)
    end,
    on_stderr = function(_, data)
      self:_stderr(data)
    end,
    on_exit = function(_, code)
      self:_exit(code)
    end,
  }
  if opts.env and next(opts.env) then
    job_opts.env = opts.env
  end
  local ok, job = pcall(vim.fn.jobstart, opts.cmd, job_opts)
  if not ok then
    return nil, tostring(job)
  end
  if job == 0 then
    return nil, 'invalid arguments for jobstart'
  end
  if job < 0 then
    return nil, string.format("'%s' is not executable", tostring(opts.cmd[1]))
  end
  self.job = job
  return true
end

function Client:running()
  return self.job ~= nil and not self.exited
end

-- stop ends the job; its on_exit still runs.
function Client:stop()
  if self.job and not self.exited then
    pcall(vim.fn.jobstop, self.job)
  end
end

-- send writes one message as a line. The single point where bytes leave.
function Client:send(msg)
  if not self:running() then
    return false
  end
  local ok, line = pcall(json.encode, msg)
  if not ok then
    self:_error('cannot encode message: ' .. tostring(line))
    return false
  end
  local sent = vim.fn.chansend(self.job, line .. '\n')
  return sent ~= 0
end

-- request sends a call; cb(err, result) runs once with the answer, or with
-- err.exited = true when the job ended first.
function Client:request(method, params, cb)
  self.next_id = self.next_id + 1
  local id = self.next_id
  self.pending[id] = { method = method, cb = cb }
  if not self:send({ jsonrpc = '2.0', id = id, method = method, params = params }) then
    self.pending[id] = nil
    vim.schedule(function()
      cb({ code = -32000, message = 'the hearth agent is not running', exited = true })
    end)
  end
  return id
end

function Client:notify(method, params)
  return self:send({ jsonrpc = '2.0', method = method, params = params })
end

-- feed takes one on_stdout chunk: a list whose first item continues the
-- previous partial line and whose last item is the (possibly empty) start
-- of the next line.
function Client:feed(data)
  if type(data) ~= 'table' or #data == 0 then
    return
  end
  local lines = data
  lines[1] = self.partial .. lines[1]
  self.partial = lines[#lines]
  for i = 1, #lines - 1 do
    self:handle_line(lines[i])
  end
  if self.opts.on_batch then
    self:_guard(self.opts.on_batch)
  end
end

-- handle_line decodes and dispatches one line of the agent's output.
function Client:handle_line(line)
  line = line:gsub('\r$', '')
  if line:match('^%s*$') then
    return
  end
  local ok, msg = pcall(json.decode, line)
  if not ok or type(msg) ~= 'table' then
    self:_error('bad message from the agent: ' .. line:sub(1, 200))
    return
  end
  self:_guard(function()
    self:dispatch(msg)
  end)
end

function Client:dispatch(msg)
  local method = M.nn(msg.method)
  local id = M.nn(msg.id)
  local params = M.nn(msg.params)
  if method and id ~= nil then
    local answered = false
    local respond = function(result, err)
      if answered then
        return
      end
      answered = true
      local reply = { jsonrpc = '2.0', id = id }
      if err then
        reply.error = err
      else
        reply.result = result == nil and vim.NIL or result
      end
      self:send(reply)
    end
    if self.opts.on_request then
      self.opts.on_request(method, params, respond)
    else
      respond(nil, { code = -32601, message = 'method not found: ' .. method })
    end
  elseif method then
    if self.opts.on_notification then
      self.opts.on_notification(method, params)
    end
  elseif id ~= nil then
    local p = self.pending[id]
    if not p then
      return -- an answer nobody waits for (e.g. after a restart)
    end
    self.pending[id] = nil
    local err = M.nn(msg.error)
    if err then
      p.cb(err, nil)
    else
      p.cb(nil, M.nn(msg.result))
    end
  end
end

function Client:stderr_tail()
  return table.concat(self.stderr, '\n')
end

function Client:_stderr(data)
  for _, l in ipairs(data or {}) do
    if l ~= '' then
      table.insert(self.stderr, l)
      if #self.stderr > 20 then
        table.remove(self.stderr, 1)
      end
    end
  end
end

function Client:_exit(code)
  if self.exited then
    return
  end
  -- A final line without a newline is still a message.
  if self.partial ~= '' then
    local last = self.partial
    self.partial = ''
    self:handle_line(last)
  end
  self.exited = true
  if self.opts.on_exit then
    self:_guard(function()
      self.opts.on_exit(code, self:stderr_tail())
    end)
  end
  local pending = self.pending
  self.pending = {}
  local ids = vim.tbl_keys(pending)
  table.sort(ids)
  for _, id in ipairs(ids) do
    self:_guard(function()
      pending[id].cb({
        code = -32000,
        message = string.format('the hearth agent exited (code %d)', code),
        exited = true,
      }, nil)
    end)
  end
end

function Client:_error(msg)
  if self.opts.on_error then
    self.opts.on_error(msg)
  end
end

-- _guard runs fn, turning a Lua error into one reported message instead of
-- an error inside a job callback.
function Client:_guard(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    self:_error('internal error: ' .. tostring(err))
  end
end

M.Client = Client

return M
