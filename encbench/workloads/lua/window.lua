-- The measured window for encbench: runs a stock sysbench script unchanged and reads the
-- server's CPU counter exactly where that script's event loop starts and ends.
--
-- sysbench 1.0.20 runs each worker thread as: thread_init (connect, prepare statements),
-- a barrier that all threads pass together (its timer starts there), thread_run (the event
-- loop, internal/sysbench.lua), thread_done (close statements, disconnect).  Wrapping
-- thread_run therefore leaves connects and statement preparation outside the window.
-- Every thread prints one line at its loop's start and one at its end:
--   encbench-window <start|end> <thread id> <CLOCK_MONOTONIC ns> <raw counter>
-- and the harness takes the earliest start and the latest end (workloads/sysbench.py).
--
-- Environment (set by encbench, never on the command line):
--   ENCBENCH_SCRIPT        the stock script's name, e.g. oltp_read_only (found on sysbench's
--                          own package.path) or a path to a .lua file
--   ENCBENCH_CPU_COUNTER   the counter file: a cgroup's cpu.stat / cpuacct.usage, or
--                          /proc/PID/stat
--   ENCBENCH_CPU_KIND      usage_usec | ns | proc_stat_ticks (servers/cgroup.py: parse_counter)

local ffi = require("ffi")
pcall(ffi.cdef, [[
typedef struct { long tv_sec; long tv_nsec; } encbench_timespec;
int clock_gettime(int clk_id, encbench_timespec *tp);
]])

local script = os.getenv("ENCBENCH_SCRIPT")
local counter_path = os.getenv("ENCBENCH_CPU_COUNTER")
local counter_kind = os.getenv("ENCBENCH_CPU_KIND")
if script == nil or counter_path == nil or counter_kind == nil then
   error("window.lua needs ENCBENCH_SCRIPT, ENCBENCH_CPU_COUNTER and ENCBENCH_CPU_KIND")
end

if script:find("/", 1, true) then
   dofile(script)
else
   require(script)
end

local CLOCK_MONOTONIC = 1
local now = ffi.new("encbench_timespec")

local function monotonic_ns()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, now)
   return string.format("%d%09d", tonumber(now.tv_sec), tonumber(now.tv_nsec))
end

-- The raw counter as text (a 64-bit value must not pass through a Lua number).
local function counter()
   local f = assert(io.open(counter_path, "r"))
   local text = f:read("*a")
   f:close()
   if counter_kind == "usage_usec" then
      return text:match("usage_usec (%d+)")
   elseif counter_kind == "ns" then
      return text:match("(%d+)")
   end
   -- /proc/PID/stat: utime and stime are fields 14 and 15; the command name (field 2, in
   -- parentheses) may hold spaces, so count from the last ")".
   local fields = {}
   for field in text:match(".*%)(.*)"):gmatch("%S+") do
      fields[#fields + 1] = field
   end
   return tostring(tonumber(fields[12]) + tonumber(fields[13]))
end

local function mark(phase, thread_id)
   -- Read the counter first at the start and last at the end: the window holds the loop.
   local line
   if phase == "start" then
      local value = counter()
      line = string.format("encbench-window start %d %s %s\n", thread_id, monotonic_ns(), value)
   else
      local at = monotonic_ns()
      line = string.format("encbench-window end %d %s %s\n", thread_id, at, counter())
   end
   -- One write per line: stdio locks each call, so threads' lines do not interleave.
   io.stdout:write(line)
end

local stock_thread_run = thread_run

function thread_run(thread_id)
   mark("start", thread_id)
   stock_thread_run(thread_id)
   mark("end", thread_id)
end
