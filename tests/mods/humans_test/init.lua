-- humans_test: a stone room open to the sky (x, z in 1 .. 12, floor at y = 0) that
-- humans join.

local SIZE = 12
local WALL = "default:stone"
local MIDDLE = {x = 6.5, y = 0.5, z = 8}
local pinned = false  -- reset option pin_humans: humans stand still in front of agent_0

craftium_ma.register_area({x = 0, y = 0, z = 0}, {x = SIZE + 1, y = 4, z = SIZE + 1})

local function build_room()
	for x = 0, SIZE + 1 do
		for z = 0, SIZE + 1 do
			local wall = x == 0 or x == SIZE + 1 or z == 0 or z == SIZE + 1
			core.set_node({x = x, y = 0, z = z}, {name = WALL})
			for y = 1, 3 do
				core.set_node({x = x, y = y, z = z}, {name = wall and WALL or "air"})
			end
		end
	end
end

-- the tests look for the human's body: no name tag above it
local function place_human(player)
	player:set_nametag_attributes({color = {a = 0, r = 0, g = 0, b = 0},
		bgcolor = {a = 0, r = 0, g = 0, b = 0}})
	if pinned then
		player:set_pos({x = 6.5, y = 0.5, z = 4.5})
		player:set_physics_override({speed = 0, jump = 0})
	else
		player:set_pos(MIDDLE)
		player:set_physics_override({speed = 1, jump = 1})
	end
end

craftium_ma.register_on_reset(function(seed, options)
	core.set_timeofday(0.5)
	build_room()
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
	for _, name in ipairs(craftium_ma.humans()) do
		craftium_ma.add_human_reward(name, 1)
	end
	-- what the server granted the humans, for the tests
	local privs = {}
	for _, name in ipairs(craftium_ma.humans()) do
		privs[#privs + 1] = name .. ":" .. core.privs_to_string(core.get_player_privs(name))
	end
	craftium_ma.set_info(craftium_ma.agents()[1], "human_privs", table.concat(privs, ";"))
end)
