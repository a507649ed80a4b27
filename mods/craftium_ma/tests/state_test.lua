local t = ...

local alice = t.fake_player("agent_0",
	{pos = {x = 1, y = 2, z = 3}, yaw = 0.5, pitch = 0.25, hp = 7})
local bob = t.fake_player("agent_1", {pos = {x = 4, y = 5, z = 6}, yaw = 1.5, hp = 20})

local function new_state()
	return t.load("state", {agent_players = function() return {alice, bob} end})
end

t.test("the vector is shared() followed by per_agent(player) of each agent in order", function()
	local state = new_state()
	state.register_state(function() return {9, 8} end, function(p) return {p:get_hp()} end)
	state.compute()
	t.eq(state.packed(), "9 8 7 20")
end)

t.test("either part may be nil", function()
	local state = new_state()
	state.register_state(nil, function(p) return {p:get_hp()} end)
	state.compute()
	t.eq(state.packed(), "7 20")
	state.register_state(function() return {1} end)
	state.compute()
	t.eq(state.packed(), "1")
end)

t.test("without registered functions the vector is what set_state gave", function()
	local state = new_state()
	state.set_state({3, 4})
	state.compute()
	t.eq(state.packed(), "3 4")
	t.raises(function() state.set_state(5) end,
		"craftium_ma.set_state: the state must be a flat array of numbers, got number")
end)

t.test("register_state with a part that is not a function is an error naming it", function()
	local state = new_state()
	t.raises(function() state.register_state({1, 2}) end,
		"craftium_ma.register_state: shared must be a function or nil, got table")
	t.raises(function() state.register_state(nil, 3) end,
		"craftium_ma.register_state: per_agent must be a function or nil, got number")
end)

t.test("the packed vector is its numbers with 14 significant digits, separated by spaces",
	function()
	local state = new_state()
	state.set_state({1, -0.5, 1 / 3, 1e-20})
	t.eq(state.packed(), "1 -0.5 0.33333333333333 1e-20")
	state.set_state({})
	t.eq(state.packed(), "")
	state.set_state({1, "2"})
	t.raises(function() state.packed() end,
		"craftium_ma: the state vector must hold only numbers, its value 2 is a string")
end)

t.test("agent_state reads the named fields of a player in order", function()
	local state = new_state()
	t.eq(state.agent_state({"x", "z", "yaw"})(alice), {1, 3, 0.5})
	t.eq(state.agent_state({"hp", "y", "pitch"})(alice), {7, 2, 0.25})
	state.register_state(nil, state.agent_state({"x", "z"}))
	state.compute()
	t.eq(state.packed(), "1 3 4 6")
end)

t.test("agent_state with an unknown field or no list is an error listing the fields", function()
	local state = new_state()
	t.raises(function() state.agent_state({"x", "speed"}) end,
		"craftium_ma.agent_state: unknown field 'speed'; the fields are x, y, z, yaw, pitch, hp")
	t.raises(function() state.agent_state("x") end,
		"craftium_ma.agent_state: give a list of fields (x, y, z, yaw, pitch, hp), got string")
end)
