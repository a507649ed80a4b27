local t = ...

t.test("callbacks run in registration order with their arguments", function()
	local callbacks = t.load("callbacks", {checks = t.load("checks")})
	local calls = {}
	callbacks.register_on_reset(function(seed, options) calls[#calls + 1] = {"a", seed, options.n} end)
	callbacks.register_on_reset(function(seed) calls[#calls + 1] = {"b", seed} end)
	callbacks.register_on_step(function(dtime) calls[#calls + 1] = {"step", dtime} end)
	callbacks.run_reset(3, {n = 1})
	callbacks.run_step(0.1)
	t.eq(calls, {{"a", 3, 1}, {"b", 3}, {"step", 0.1}})
end)

t.test("registering something that is not a function is an error", function()
	local callbacks = t.load("callbacks", {checks = t.load("checks")})
	t.raises(function() callbacks.register_on_step(nil) end,
		"craftium_ma.register_on_step: give a function, got nil")
	t.raises(function() callbacks.register_on_reset("reset") end,
		"craftium_ma.register_on_reset: give a function, got string")
end)
