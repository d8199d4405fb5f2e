-- Connection setup rate for encbench: every event opens a connection, runs one trivial query
-- and closes it, so events/s is connections/s (the seed study's "create connections as fast as
-- possible").  TLS or not is chosen by sysbench's own --mysql-ssl=on|off.
--
-- --proof=on instead prints the server's view of one connection's TLS state (Ssl_version,
-- Ssl_cipher) as name=value lines, so the harness can prove a run encrypted or plain.

sysbench.cmdline.options = {
   proof = {"print the server's Ssl_version and Ssl_cipher of each connection", false},
}

local drv

function thread_init()
   drv = sysbench.sql.driver()
end

function event()
   local con = drv:connect()
   if sysbench.opt.proof then
      local rs = con:query(
         "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
      for _ = 1, rs.nrows do
         local row = rs:fetch_row()
         print(row[1] .. "=" .. (row[2] or ""))
      end
   else
      con:query_row("SELECT 1")
   end
   con:disconnect()
end
