-- hearth.image: image files attached to a prompt (:HearthImage). An image is
-- read from disk, recognised by its first bytes (PNG, JPEG, GIF or WebP, the
-- types the model takes), capped at hearth's limit and base64-encoded for an
-- ACP image block.
local M = {}

-- MAX_BYTES is hearth's limit per image (workspace.MaxImageBytes).
M.MAX_BYTES = 20 * 1024 * 1024

-- sniff returns the MIME type of the image whose first bytes are head, or nil.
function M.sniff(head)
  if head:sub(1, 8) == '\137PNG\r\n\26\n' then
    return 'image/png'
  elseif head:sub(1, 3) == '\255\216\255' then
    return 'image/jpeg'
  elseif head:sub(1, 6) == 'GIF87a' or head:sub(1, 6) == 'GIF89a' then
    return 'image/gif'
  elseif head:sub(1, 4) == 'RIFF' and head:sub(9, 12) == 'WEBP' then
    return 'image/webp'
  end
  return nil
end

local ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
local enc = {}
for i = 1, 64 do
  enc[i - 1] = ALPHABET:sub(i, i)
end

-- base64 encodes s (vim.base64 when this Neovim has it, 0.10+).
function M.base64(s)
  if vim.base64 and vim.base64.encode then
    return vim.base64.encode(s)
  end
  local out = {}
  local n = #s
  for i = 1, n - 2, 3 do
    local a, b, c = s:byte(i, i + 2)
    local v = a * 65536 + b * 256 + c
    out[#out + 1] = enc[math.floor(v / 262144)] .. enc[math.floor(v / 4096) % 64] .. enc[math.floor(v / 64) % 64] .. enc[v % 64]
  end
  local rest = n % 3
  if rest == 1 then
    local v = s:byte(n) * 65536
    out[#out + 1] = enc[math.floor(v / 262144)] .. enc[math.floor(v / 4096) % 64] .. '=='
  elseif rest == 2 then
    local a, b = s:byte(n - 1, n)
    local v = a * 65536 + b * 256
    out[#out + 1] = enc[math.floor(v / 262144)] .. enc[math.floor(v / 4096) % 64] .. enc[math.floor(v / 64) % 64] .. '='
  end
  return table.concat(out)
end

-- size formats a byte count as hearth does: "70 B", "12.3 KiB", "1.5 MiB".
function M.size(n)
  if n < 1024 then
    return string.format('%d B', n)
  elseif n < 1024 * 1024 then
    return string.format('%.1f KiB', n / 1024)
  end
  return string.format('%.1f MiB', n / 1048576)
end

-- describe is the line the chat shows for an image block.
function M.describe(mime, b64, name)
  local bytes = math.floor(#(b64 or '') / 4) * 3 - select(2, (b64 or ''):sub(-2):gsub('=', ''))
  local what = (mime or 'image'):gsub('^image/', ''):upper()
  if name then
    return string.format('[image: %s, %s, %s]', name, what, M.size(bytes))
  end
  return string.format('[image: %s, %s]', what, M.size(bytes))
end

-- load reads the image file at path: { mimeType, data (base64), name, bytes },
-- or nil and a message saying what is wrong.
function M.load(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  local f, err = io.open(full, 'rb')
  if not f then
    return nil, 'cannot read ' .. path .. ': ' .. tostring(err)
  end
  local size = f:seek('end')
  f:seek('set', 0)
  if size > M.MAX_BYTES then
    f:close()
    return nil, string.format('%s is %s; hearth sends images of at most %s', path, M.size(size), M.size(M.MAX_BYTES))
  end
  local bytes = f:read('*a') or ''
  f:close()
  local mime = M.sniff(bytes:sub(1, 16))
  if not mime then
    return nil, path .. ' is not a PNG, JPEG, GIF or WebP image'
  end
  return { mimeType = mime, data = M.base64(bytes), name = vim.fn.fnamemodify(full, ':t'), bytes = #bytes }
end

return M
