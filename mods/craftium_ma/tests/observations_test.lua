local t = ...

local alice = t.fake_player("agent_0", {hp = 7})
local bob = t.fake_player("agent_1", {hp = 20})

local function new_observations(declared, observed)
	return t.load("observations", {checks = t.load("checks"), declared = declared,
		observed = observed, agent_players = function() return {alice, bob} end})
end

t.test("every agent gets the value of each observed name, after compute()", function()
	local obs = new_observations({"hp", "seen", "unused"}, {"seen", "hp"})
	obs.register_observation("hp", function(p) return p:get_hp() end)
	obs.register_observation("seen", function(p) return {p:get_hp() > 10, 1.5} end)
	obs.register_observation("unused", function() error("not observed: never called") end)
	t.eq(obs.current(), {})
	obs.compute()
	t.eq(obs.current(), {agent_0 = {hp = 7, seen = {false, 1.5}},
		agent_1 = {hp = 20, seen = {true, 1.5}}})
end)

t.test("an env that observes no declared name gets nothing, and nothing is called", function()
	local obs = new_observations({"hp"}, {})
	obs.register_observation("hp", function() error("never called") end)
	obs.compute()
	t.eq(obs.current(), nil)
end)

t.test("a name the manifest does not declare, or no function, is an error naming it", function()
	local obs = new_observations({"hp", "apples"}, {"hp"})
	t.raises(function() obs.register_observation("hpp", function() end) end,
		"craftium_ma.register_observation: the manifest declares no observation 'hpp'; " ..
		"it declares hp, apples ([observations] in task.toml)")
	t.raises(function() new_observations({}, {}).register_observation("hp", function() end) end,
		"it declares none")
	t.raises(function() obs.register_observation(3, function() end) end,
		"craftium_ma.register_observation: the name must be a string, got number")
	t.raises(function() obs.register_observation("hp", 3) end,
		"craftium_ma.register_observation: give a function, got number")
end)

t.test("a function that fails or gives something else than numbers names the name and agent",
		function()
	local obs = new_observations({"hp"}, {"hp"})
	obs.register_observation("hp", function(p)
		if p == bob then error("no hp here", 0) end
		return 1
	end)
	t.raises(obs.compute, "no hp here (observation 'hp' of agent_1)")
	obs.register_observation("hp", function() return "a" end)
	t.raises(obs.compute, "observations_test.lua:" .. debug.getinfo(1, "l").currentline - 1 ..
		": craftium_ma: an observation must be")
	for _, case in ipairs({
		{"a", "got string"},
		{{1, "a"}, "got a table with the number key 2 holding a string"},
		{{x = 1}, "got a table with the string key x holding a number"},
		{{[1] = 1, [3] = 3}, "got a table with holes"},
	}) do
		obs.register_observation("hp", function() return case[1] end)
		t.raises(obs.compute, "craftium_ma: an observation must be a number, a boolean or a " ..
			"flat array of them, " .. case[2] .. " (observation 'hp' of agent_0)")
	end
end)
