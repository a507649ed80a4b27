-- humans_test: a stone room open to the sky (x, z in 1 .. 12, floor at y = 0) that
-- humans join.

local SIZE = 12
local WALL = "default:stone"
local MIDDLE = {x = 6.5, y = 0.5, z = 8}
local pinned = false  -- reset option pin_humans: humans stand still in front of agent_0

-- built once; every reset restores it
local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = SIZE + 1, y = 4, z = SIZE + 1}
craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, floor = WALL, wall = WALL, wall_height = 3})
end)

-- the tests look for the human's body: no name tag above it
local function place_human(player)
	player:set_nametag_attributes({color = {a = 0, r = 0, g = 0, b = 0},
		bgcolor = {a = 0, r = 0, g = 0, b = 0}})
	-- physics first: the client gets them before the move
	if pinned then
		player:set_physics_override({speed = 0, jump = 0})
		player:set_pos({x = 6.5, y = 0.5, z = 4.5})
	else
		player:set_physics_override({speed = 1, jump = 1})
		player:set_pos(MIDDLE)
	end
end

craftium_ma.register_on_reset(function(seed, options)
	core.set_timeofday(0.5)
	pinned = options.pin_humans == true
	local players = craftium_ma.agent_players()
	craftium_ma.spawn(players[1], {x = 6.5, y = 0.5, z = 2}, 0)
	if players[2] then
		craftium_ma.spawn(players[2], {x = 11, y = 0.5, z = 11}, 180)
	end
	for _, name in ipairs(craftium_ma.humans()) do
		place_human(core.get_player_by_name(name))
	end
end)

core.register_on_joinplayer(function(player)
	if craftium_ma.is_human(player) then
		place_human(player)
	end
end)

craftium_ma.register_on_step(function()
	-- agent_1 and the humans in the game are a team that gets 1 a step
	local crew = craftium_ma.humans()
	table.insert(crew, 1, craftium_ma.agents()[2])
	craftium_ma.set_teams({crew = crew})
	craftium_ma.add_team_reward("crew", 1)
	-- what the server granted the humans, for the tests
	local privs = {}
	for _, name in ipairs(craftium_ma.humans()) do
		privs[#privs + 1] = name .. ":" .. core.privs_to_string(core.get_player_privs(name))
	end
	craftium_ma.set_info(craftium_ma.agents()[1], "human_privs", table.concat(privs, ";"))
end)
