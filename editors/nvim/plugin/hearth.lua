-- hearth.nvim: defines the :Hearth commands; everything else loads on use.
if vim.g.loaded_hearth then
  return
end
vim.g.loaded_hearth = true
if vim.fn.has('nvim-0.7') == 0 then
  vim.api.nvim_err_writeln('hearth.nvim needs Neovim 0.7 or later')
  return
end
require('hearth').create_commands()

-- :help hearth works at once, however the plugin was installed: a plugin
-- manager builds the help tags, a plain 'runtimepath' entry does not.
local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h') .. '/doc'
if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
  pcall(vim.cmd, 'silent helptags ' .. vim.fn.fnameescape(doc))
end
