local t = ...

-- A shaping module whose agents' rewards add up in `paid`, with potential fn.
local function new_shaping(fn)
	local paid = {agent_0 = 0, agent_1 = 0}
	local shaping = t.load("shaping", {agents = function() return {"agent_0", "agent_1"} end,
		add_reward = function(name, reward) paid[name] = paid[name] + reward end,
		checks = t.load("checks")})
	shaping.register_shaping(fn)
	return shaping, paid
end

t.test("every agent is paid each step's change of the potential", function()
	local value = 2
	local shaping, paid = new_shaping(function() return value end)
	shaping.begin()
	shaping.pay()
	t.eq(paid, {agent_0 = 0, agent_1 = 0})
	value = 5
	shaping.pay()
	value = 4
	shaping.pay()
	t.eq(paid, {agent_0 = 2, agent_1 = 2})  -- the last potential less the first
end)

t.test("a table of potentials pays each agent the change of its own", function()
	local red, blue = 0, 10
	local shaping, paid = new_shaping(function() return {agent_0 = red, agent_1 = blue} end)
	shaping.begin()
	red = 3
	shaping.pay()
	red, blue = 4, 8
	shaping.pay()
	t.eq(paid, {agent_0 = 4, agent_1 = -2})
end)

t.test("a potential that is nil at the reset shapes nothing that episode", function()
	local on, calls = false, 0
	local shaping, paid = new_shaping(function()
		calls = calls + 1
		return on and calls or nil
	end)
	shaping.begin()
	shaping.pay()
	t.eq({paid.agent_0, calls}, {0, 1})
	on = true
	shaping.begin()
	shaping.pay()
	t.eq(paid, {agent_0 = 1, agent_1 = 1})
end)

t.test("a potential that is not a number is an error naming it", function()
	local shaping = new_shaping(function() return "far" end)
	t.raises(shaping.begin,
		": craftium_ma: a potential must be a number, a table of a number per agent, or nil; got string")
	shaping = new_shaping(function() return 0 / 0 end)
	t.raises(shaping.begin, "; got nan")
	shaping = new_shaping(function() return {agent_0 = 1} end)
	t.raises(shaping.begin, "; got nil for agent_1")
	t.raises(function() new_shaping(nil) end, "craftium_ma.register_shaping: give a function, got nil")
end)
