-- The task's reset and step callbacks, run in registration order. Pure Lua
-- (tests/).
--
-- deps.checks: checks.lua.

local deps = ...
local callbacks = {}

local on_reset, on_step = {}, {}

--- fn(seed, options) runs at every reset, in registration order.
function callbacks.register_on_reset(fn)
	deps.checks.callback("register_on_reset", fn)
	on_reset[#on_reset + 1] = fn
end

--- fn(dtime) runs once per env step, after the server's tick.
function callbacks.register_on_step(fn)
	deps.checks.callback("register_on_step", fn)
	on_step[#on_step + 1] = fn
end

function callbacks.run_reset(seed, options)
	for _, fn in ipairs(on_reset) do
		fn(seed, options)
	end
end

function callbacks.run_step(dtime)
	for _, fn in ipairs(on_step) do
		fn(dtime)
	end
end

return callbacks
