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
