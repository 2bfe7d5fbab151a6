-- hearth.plan: the agent's plan (ACP `plan` updates) in a chat buffer. A
-- plan is a checklist block:
--
--   ☰ Plan (1/3 done)
--     [x] read the parser
--     [~] fix the bug
--     [ ] run the tests
--
-- Each update carries the whole list, so it replaces the block: in place
-- when the block ends the buffer, else the old block goes and the new one is
-- appended where the agent is now, so a chat holds one plan, the current
-- one. An empty list removes it. A replay (session/load) rebuilds it the
-- same way, so a resumed session shows its last plan.
local nn = require('hearth.rpc').nn
local chat = require('hearth.chat')

local M = {}

M.HEADER = '☰ Plan'
M.MARKS = { completed = '[x]', in_progress = '[~]', pending = '[ ]' }

-- lines renders entries as the block's lines.
function M.lines(entries)
  local body, done = {}, 0
  for _, e in ipairs(entries) do
    e = nn(e) or {}
    local status = nn(e.status)
    if status == 'completed' then
      done = done + 1
    end
    local mark = M.MARKS[status] or M.MARKS.pending
    table.insert(body, '  ' .. mark .. ' ' .. chat.visible(tostring(nn(e.content) or '')))
  end
  local lines = { string.format('%s (%d/%d done)', M.HEADER, done, #entries) }
  vim.list_extend(lines, body)
  return lines
end

-- block is the chat's plan block, { row, n }, when the buffer still holds it
-- (a reset or a wiped buffer loses its mark).
local function block(c)
  local p = c.plan_block
  if not p or not c.buf or not vim.api.nvim_buf_is_valid(c.buf) then
    return nil
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(c.buf, chat.ns, p.mark, {})
  if not pos or pos[1] == nil then
    return nil
  end
  return { row = pos[1], n = p.n }
end

-- show replaces the plan of chat c with entries (a list of ACP plan
-- entries).
function M.show(c, entries)
  entries = type(entries) == 'table' and entries or {}
  local buf = c:bufnr()
  c:flush() -- text still buffered goes before the plan
  local old = block(c)
  local lines = #entries > 0 and M.lines(entries) or {}
  if old and old.row + old.n == vim.api.nvim_buf_line_count(buf) and #lines > 0 then
    c:_edit(function()
      vim.api.nvim_buf_set_lines(buf, old.row, old.row + old.n, false, lines)
      vim.api.nvim_buf_del_extmark(buf, chat.ns, c.plan_block.mark)
      c.plan_block = { mark = vim.api.nvim_buf_set_extmark(buf, chat.ns, old.row, 0, {}), n = #lines }
    end)
    return
  end
  if old then
    c:_edit(function()
      vim.api.nvim_buf_set_lines(buf, old.row, old.row + old.n, false, {})
      vim.api.nvim_buf_del_extmark(buf, chat.ns, c.plan_block.mark)
    end)
  end
  c.plan_block = nil
  if #lines == 0 then
    return
  end
  c:_section('agent')
  c:end_message()
  c:_edit(function()
    local row = c:_append(lines)
    c.plan_block = { mark = vim.api.nvim_buf_set_extmark(buf, chat.ns, row, 0, {}), n = #lines }
  end)
  c.open = false
end

return M
