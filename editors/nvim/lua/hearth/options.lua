-- A session's config options (ACP: the model, its reasoning effort, the
-- mode) and how full its context is (usage_update), for :HearthModel,
-- :HearthEffort and the statusline.
local nn = require('hearth.rpc').nn

local M = {}

--- parse turns ACP's configOptions into
--- { id =, name =, category =, current =, values = { { value =, name =, description = } } }
--- tables: select options only, grouped values flattened.
function M.parse(list)
  local out = {}
  for _, o in ipairs(nn(list) or {}) do
    o = nn(o)
    if type(o) == 'table' and nn(o.type) == 'select' and type(nn(o.id)) == 'string' and type(nn(o.currentValue)) == 'string' then
      local values = {}
      for _, v in ipairs(nn(o.options) or {}) do
        v = nn(v) or {}
        local flat = nn(v.group) ~= nil and (nn(v.options) or {}) or { v }
        for _, x in ipairs(flat) do
          x = nn(x) or {}
          if type(nn(x.value)) == 'string' then
            table.insert(values, { value = x.value, name = nn(x.name) or x.value, description = nn(x.description) })
          end
        end
      end
      table.insert(out, { id = o.id, name = nn(o.name) or o.id, category = nn(o.category), current = o.currentValue, values = values })
    end
  end
  return out
end

--- find is the option of category ('model', 'thought_level', 'mode'), or
--- the one of that id.
function M.find(options, category)
  for _, o in ipairs(options or {}) do
    if o.category == category then
      return o
    end
  end
  for _, o in ipairs(options or {}) do
    if o.id == category then
      return o
    end
  end
  return nil
end

--- context_left is "62% context left" for a usage_update's used and size;
--- nil when they say nothing usable.
function M.context_left(used, size)
  used, size = tonumber(nn(used)), tonumber(nn(size))
  if not used or not size or size <= 0 or used < 0 then
    return nil
  end
  local left = math.floor(100 * (1 - used / size) + 0.5)
  return string.format('%d%% context left', math.max(0, math.min(100, left)))
end

--- line is what the statusline says of a session: its model, its effort and
--- how much context is left ("o3 · high · 62% context left"); '' when none
--- is known.
function M.line(s)
  if not s then
    return ''
  end
  local parts = {}
  local model, effort = M.find(s.options, 'model'), M.find(s.options, 'thought_level')
  if model then
    table.insert(parts, model.current)
  end
  if effort then
    table.insert(parts, effort.current)
  end
  if s.usage then
    table.insert(parts, M.context_left(s.usage.used, s.usage.size))
  end
  return table.concat(parts, ' · ')
end

--- choose sets session s's option of category to value
--- (session/set_config_option through request(method, params, cb)); without
--- a value, the user picks one with vim.ui.select. notify(msg, level)
--- reports; cb(err, current) follows the answer.
function M.choose(request, notify, s, category, value, cb)
  local what = category == 'model' and 'model' or 'reasoning effort'
  local o = M.find(s.options, category)
  if not o then
    notify('the agent offers no ' .. what .. ' to choose for this session', vim.log.levels.WARN)
    return cb and cb('no option')
  end
  local function apply(v)
    request('session/set_config_option', { sessionId = s.id, configId = o.id, value = v }, function(err, res)
      if err then
        notify('could not set the ' .. what .. ' to ' .. v .. ': ' .. err, vim.log.levels.ERROR)
      else
        s.options = M.parse(res and res.configOptions)
        notify(what .. ': ' .. v)
      end
      if cb then
        cb(err, not err and v or nil)
      end
    end)
  end
  if value and value ~= '' then
    return apply(value)
  end
  vim.ui.select(o.values, {
    prompt = 'hearth ' .. what,
    kind = 'hearth_' .. category,
    format_item = function(v)
      local cur = (v.value == o.current) and ' (current)' or ''
      return tostring(v.name) .. cur .. (v.description and (' — ' .. v.description) or '')
    end,
  }, function(choice)
    if choice then
      apply(choice.value)
    end
  end)
end

--- values are the values of session s's option of category, for completion.
function M.values(s, category)
  local out = {}
  local o = s and M.find(s.options, category)
  for _, v in ipairs((o and o.values) or {}) do
    table.insert(out, v.value)
  end
  return out
end

return M
