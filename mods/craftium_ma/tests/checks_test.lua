local t = ...
local checks = t.load("checks")

t.test("player_name takes a name as it is and an ObjectRef's player name", function()
	t.eq(checks.player_name("agent_0"), "agent_0")
	t.eq(checks.player_name(t.fake_player("agent_1")), "agent_1")
	t.eq(checks.player_name(nil), nil)
	t.eq(checks.player_name(42), nil)
end)

t.test("a reward that is not a number, or is nan, is an error naming the function", function()
	t.raises(function() checks.reward("add_reward", "lots") end,
		"craftium_ma.add_reward: the reward must be a number, got string lots")
	t.raises(function() checks.reward("set_reward", 0 / 0) end,
		"craftium_ma.set_reward: the reward must be a number, got nan")
	checks.reward("set_reward", -1.5)
end)

t.test("an info value must be a number, string, boolean or flat array of numbers", function()
	checks.info("seen", {1, 2.5})
	checks.info("name", "red")
	t.raises(function() checks.info(3, 1) end, "the key must be a string, got number")
	t.raises(function() checks.info("seen", print) end,
		"'seen' must be a number, string, boolean or flat array of numbers, got function")
	t.raises(function() checks.info("seen", {x = 1}) end,
		"'seen' must be a flat array of numbers, got a table with the string key x holding a number")
end)

t.test("a position needs numbers x, y and z", function()
	checks.position("spawn", {x = 1, y = 0.5, z = 2})
	t.raises(function() checks.position("spawn", nil) end,
		"craftium_ma.spawn: pos must be a position {x = ..., y = ..., z = ...}, got nil")
	t.raises(function() checks.position("spawn", {1, 2, 3}) end, "got a table without numbers x, y, z")
end)
