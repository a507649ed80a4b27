local t = ...

local function new_context()
	return t.load("context", {new_rng = function(seed) return {seed = seed} end})
end

t.test("options before the first reset is an error saying when they are known", function()
	local context = new_context()
	t.raises(function() context.options() end,
		"craftium_ma.options() at load time: the options are known from the first reset on")
end)

t.test("begin sets the episode's seed, options, random numbers and length", function()
	local context = new_context()
	context.begin({seed = 7, options = {size = 4}, max_cycles = 50})
	t.eq(context.seed(), 7)
	t.eq(context.options(), {size = 4})
	t.eq(context.rng(), {seed = 7})
	t.eq(context.max_cycles(), 50)
end)

t.test("a request without seed or options gives seed 0 and no options", function()
	local context = new_context()
	context.begin({})
	t.eq({context.seed(), context.options(), context.max_cycles()}, {0, {}, nil})
end)

t.test("steps count from every reset", function()
	local context = new_context()
	context.begin({seed = 1})
	context.count_step()
	context.count_step()
	t.eq(context.step_count(), 2)
	context.begin({seed = 2})
	t.eq(context.step_count(), 0)
end)
