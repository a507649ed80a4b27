local t = ...

local function new_players(rng)
	return t.load("players", {agents = function() return {"agent_0", "agent_1"} end,
		rng = function() return rng end, checks = t.load("checks")})
end

t.test("random_positions draws distinct cells at minp.y from the episode's rng", function()
	local rng = t.fake_rng({2, 3, 2, 3, 4, 1})
	local out = new_players(rng).random_positions({x = 1, y = 0.5, z = 1}, {x = 4, y = 0.5, z = 4}, 2)
	-- the second draw repeats (2, 3) and is skipped
	t.eq(out, {{x = 2, y = 0.5, z = 3}, {x = 4, y = 0.5, z = 1}})
	t.eq(rng.calls[1], {1, 4})
end)

t.test("random_positions never picks an x, z of the avoid list", function()
	local rng = t.fake_rng({1, 1, 2, 1})
	local out = new_players(rng).random_positions({x = 1, y = 0, z = 1}, {x = 2, y = 0, z = 1}, 1,
		{{x = 1, z = 1}})
	t.eq(out, {{x = 2, y = 0, z = 1}})
end)

t.test("asking for more positions than are free is an error with both counts", function()
	local players = new_players(t.fake_rng({1}))
	t.raises(function()
		players.random_positions({x = 1, y = 0, z = 1}, {x = 2, y = 0, z = 2}, 4,
			{{x = 2, z = 2}, {x = 9, z = 9}})
	end, "craftium_ma.random_positions: 4 positions asked for, 3 free")
end)
