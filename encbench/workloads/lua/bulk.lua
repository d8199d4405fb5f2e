-- Bulk streaming for encbench: every event reads the whole result of --sql through this
-- thread's one persistent connection, so events × result bytes / time is the stream rate.
-- The rows are fetched by libmariadb in C and discarded without a Lua loop over them: the
-- client does only what any client must (receive, decrypt, parse packets), so the wire and
-- the encryption are what limit the rate, not the client's output formatting.

sysbench.cmdline.options = {
   sql = {"query whose result set is read", "SELECT id, payload FROM encbench_bulk"},
}

local con

function thread_init()
   con = sysbench.sql.driver():connect()
end

function event()
   local rs = con:query(sysbench.opt.sql)
   if rs then
      rs:free()
   end
end

function thread_done()
   con:disconnect()
end
