-- observations_test: agents on a stone floor walled with brick; each observes
-- values made from the step count and its index (task.toml [observations]).

local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = 8, y = 3, z = 8}
craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, floor = "default:stone",
		wall = "default:brick"})
end)

craftium_ma.register_on_reset(function()
	core.set_timeofday(0.5)
	for i, player in ipairs(craftium_ma.agent_players()) do
		craftium_ma.spawn(player, {x = 2 * i, y = 0.5, z = 2}, 30)
	end
end)

craftium_ma.register_on_step(function()
	if craftium_ma.options().end_agent_1 == craftium_ma.step_count() then
		craftium_ma.set_termination("agent_1")
	end
end)

local function index_of(player)
	return tonumber(player:get_player_name():match("%d+$"))
end

craftium_ma.register_observation("count", function(player)
	local options, name = craftium_ma.options(), player:get_player_name()
	if options.fail == name then
		error("count failed")
	end
	if options.wrong_type == name then
		return "many"
	end
	local count = craftium_ma.step_count()
	return options.wrong_length == name and {count, count} or {count}
end)
craftium_ma.register_observation("index", index_of)
craftium_ma.register_observation("values",
	function() return {0.1, -2.5, 0.001, craftium_ma.step_count() / 3} end)
craftium_ma.register_observation("flags",
	function(player) return {craftium_ma.step_count() % 2 == 0, index_of(player) == 0} end)
