-- The agent's file access through Neovim's buffers (ACP fs/read_text_file,
-- fs/write_text_file): a loaded buffer's lines are what the agent reads,
-- unsaved changes included, and its writes change the buffer's lines
-- (loading the buffer when needed) without saving them. A file that does not
-- exist is created (ACP: the client creates a missing file), with its
-- directories, holding exactly the agent's text, and its buffer loaded.
local M = {}

-- ACP's "resource not found".
local NOT_FOUND = -32002

-- same names the same file however it was spelt (symlinks, relative parts).
local function canonical(path)
  return vim.fn.resolve(vim.fn.fnamemodify(path, ':p'))
end

-- loaded_buffer returns the loaded buffer of path, if there is one.
local function loaded_buffer(path)
  local want = canonical(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' and canonical(name) == want then
        return b
      end
    end
  end
end

-- eol returns the line ending the buffer is written with.
local function eol(b)
  return vim.bo[b].fileformat == 'dos' and '\r\n' or '\n'
end

-- buffer_text is the text :write would put on disk.
local function buffer_text(b)
  local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  if #lines == 1 and lines[1] == '' then
    return '' -- an empty buffer writes an empty file
  end
  local sep = eol(b)
  local text = table.concat(lines, sep)
  if vim.bo[b].eol or (vim.bo[b].fixeol and not vim.bo[b].binary) then
    text = text .. sep
  end
  return text
end

local function read_disk(path)
  local f, err = io.open(path, 'rb')
  if not f then
    return nil, err
  end
  local text = f:read('*a')
  f:close()
  return text
end

-- slice applies ACP's optional line (1-based) and limit to text.
local function slice(text, line, limit)
  if line == nil and limit == nil then
    return text
  end
  local lines = vim.split(text, '\n', { plain = true })
  local from = math.max(tonumber(line) or 1, 1)
  local to = #lines
  if limit ~= nil then
    to = math.min(to, from + math.max(tonumber(limit) or 0, 0) - 1)
  end
  return table.concat(vim.list_slice(lines, from, to), '\n')
end

local function check_path(params)
  local path = type(params) == 'table' and params.path or nil
  if type(path) ~= 'string' or path:sub(1, 1) ~= '/' then
    return nil, { code = -32602, message = 'invalid params: path must be an absolute path' }
  end
  return path
end

--- read answers fs/read_text_file: the loaded buffer's text, else the file's.
function M.read(params)
  local path, perr = check_path(params)
  if not path then
    return nil, perr
  end
  local b = loaded_buffer(path)
  local text, err
  if b then
    text = buffer_text(b)
  else
    text, err = read_disk(path)
    if not text then
      return nil, { code = NOT_FOUND, message = 'cannot read ' .. path .. ': ' .. tostring(err) }
    end
  end
  return { content = slice(text, params.line, params.limit) }
end

-- split_text turns text into buffer lines, and whether it ends with a newline.
local function split_text(text, dos)
  local ends = text:sub(-1) == '\n'
  if ends then
    text = text:sub(1, -2)
  end
  local lines = vim.split(text, '\n', { plain = true })
  if dos then
    for i, l in ipairs(lines) do
      lines[i] = l:gsub('\r$', '')
    end
  end
  return lines, ends
end

-- create makes the missing file path hold text, creating its directories,
-- and loads its buffer (listed, unmodified).
local function create(path, text)
  local dir = vim.fn.fnamemodify(path, ':h')
  if vim.fn.isdirectory(dir) == 0 and vim.fn.mkdir(dir, 'p') == 0 then
    return nil, { code = -32603, message = 'cannot create the directory ' .. dir }
  end
  local f, err = io.open(path, 'wb')
  if not f then
    return nil, { code = -32603, message = 'cannot create ' .. path .. ': ' .. tostring(err) }
  end
  local ok, werr = f:write(text)
  f:close()
  if not ok then
    return nil, { code = -32603, message = 'cannot write ' .. path .. ': ' .. tostring(werr) }
  end
  local b = vim.fn.bufadd(path)
  vim.fn.bufload(b)
  vim.bo[b].buflisted = true
  return vim.empty_dict()
end

--- write answers fs/write_text_file: the buffer of path (loaded first when
--- needed) gets the new text, unsaved. Only the lines that changed are
--- replaced, so marks and the cursor elsewhere stay put, and one undo
--- takes the agent's change back. A missing file is created (create).
function M.write(params)
  local path, perr = check_path(params)
  if not path then
    return nil, perr
  end
  if type(params.content) ~= 'string' then
    return nil, { code = -32602, message = 'invalid params: content must be a string' }
  end
  local b = loaded_buffer(path)
  if not b and vim.fn.getftype(path) == '' then
    return create(path, params.content)
  end
  if not b then
    b = vim.fn.bufadd(path)
    vim.fn.bufload(b)
    vim.bo[b].buflisted = true
  end
  if not vim.bo[b].modifiable then
    return nil, { code = -32603, message = path .. ' is not modifiable in Neovim' }
  end
  local new, ends = split_text(params.content, vim.bo[b].fileformat == 'dos')
  local old = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  local first = 0 -- lines equal at the start
  while first < #old and first < #new and old[first + 1] == new[first + 1] do
    first = first + 1
  end
  local last = 0 -- lines equal at the end, after those
  while last < #old - first and last < #new - first and old[#old - last] == new[#new - last] do
    last = last + 1
  end
  vim.api.nvim_buf_set_lines(b, first, #old - last, false, vim.list_slice(new, first + 1, #new - last))
  if vim.bo[b].eol ~= ends then
    vim.bo[b].eol = ends
    if not ends then
      vim.bo[b].fixeol = false -- keep the text exactly as the agent wrote it
    end
  end
  return vim.empty_dict()
end

--- handle serves one fs request on the main loop; respond(result, err).
function M.handle(method, params, respond)
  vim.schedule(function()
    local f = method == 'fs/read_text_file' and M.read or M.write
    local ok, res, err = pcall(f, params or {})
    if not ok then
      respond(nil, { code = -32603, message = tostring(res) })
    else
      respond(res, err)
    end
  end)
end

return M
