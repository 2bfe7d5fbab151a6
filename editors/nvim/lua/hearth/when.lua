-- hearth.when: the times the agent sends (RFC 3339, e.g. session/list's
-- updatedAt "2026-12-02T08:32:00Z") read, and shown as a person says them,
-- in the local time zone: "today 14:02", "yesterday 09:30", "Nov 28 16:40".
local M = {}

local MONTHS = { 'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec' }

-- days_from_civil is the number of days from 1970-01-01 to y-m-d in the
-- proleptic Gregorian calendar (no time zone involved, unlike os.time).
local function days_from_civil(y, m, d)
  if m <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

--- parse reads an RFC 3339 time ("…Z", "…+02:00", fractions of a second
--- allowed) and returns its Unix time, or nil when s is not one.
function M.parse(s)
  if type(s) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec, rest = s:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$')
  if not y then
    return nil
  end
  y, mo, d, h, mi, sec = tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi), tonumber(sec)
  if mo < 1 or mo > 12 or d < 1 or d > 31 or h > 23 or mi > 59 or sec > 60 then
    return nil
  end
  rest = rest:gsub('^%.%d+', '')
  local offset = 0
  if rest ~= 'Z' and rest ~= 'z' then
    local sign, oh, om = rest:match('^([+-])(%d%d):(%d%d)$')
    if not sign then
      return nil
    end
    offset = (tonumber(oh) * 60 + tonumber(om)) * 60
    if sign == '-' then
      offset = -offset
    end
  end
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset
end

local function same_day(a, b)
  return a.year == b.year and a.month == b.month and a.day == b.day
end

--- human shows Unix time t in the local time zone, relative to now (the
--- current time when nil): "today 14:02", "yesterday 09:30", "Nov 28 16:40",
--- and with the year when it is not this year's: "Nov 28 2025 16:40".
function M.human(t, now)
  now = now or os.time()
  local lt, ln = os.date('*t', t), os.date('*t', now)
  local hm = string.format('%02d:%02d', lt.hour, lt.min)
  if same_day(lt, ln) then
    return 'today ' .. hm
  end
  -- noon of the day before: os.time normalizes day 0, and noon is clear of
  -- daylight-saving shifts
  local yd = os.date('*t', os.time({ year = ln.year, month = ln.month, day = ln.day - 1, hour = 12 }))
  if same_day(lt, yd) then
    return 'yesterday ' .. hm
  end
  local day = MONTHS[lt.month] .. ' ' .. lt.day
  if lt.year ~= ln.year then
    day = day .. ' ' .. lt.year
  end
  return day .. ' ' .. hm
end

--- age shows how long ago Unix time t was, relative to now (the current
--- time when nil), in its largest whole unit: "12s", "4m", "3h", "2d".
function M.age(t, now)
  local d = math.max(0, (now or os.time()) - t)
  if d < 60 then
    return string.format('%ds', d)
  elseif d < 3600 then
    return string.format('%dm', math.floor(d / 60))
  elseif d < 86400 then
    return string.format('%dh', math.floor(d / 3600))
  end
  return string.format('%dd', math.floor(d / 86400))
end

return M
