-- small_room: find the red block. Options: size (inside width and length, nodes).
-- The room's floor is at y = 0, its inside spans x, z in 1 .. size.

local MAX_SIZE = 30
local WALL, FLOOR, BLOCK = "default:stonebrick", "default:wood", "wool:red"
local block_pos = nil
local done = {}  -- agents that touched the block this episode

craftium_ma.register_area({x = -1, y = -1, z = -1}, {x = MAX_SIZE + 2, y = 6, z = MAX_SIZE + 2})

local function build_room(size)
	for x = 0, MAX_SIZE + 1 do
		for z = 0, MAX_SIZE + 1 do
			local inside = x >= 1 and x <= size and z >= 1 and z <= size
			local wall = (x == 0 or x == size + 1 or z == 0 or z == size + 1) and
				x <= size + 1 and z <= size + 1
			core.set_node({x = x, y = 0, z = z}, {name = (inside or wall) and FLOOR or "air"})
			for y = 1, 3 do
				core.set_node({x = x, y = y, z = z}, {name = wall and WALL or "air"})
			end
		end
	end
end

craftium_ma.register_on_reset(function(seed, options)
	local size = math.min(tonumber(options.size) or 9, MAX_SIZE)
	local rng = PcgRandom(seed)
	core.set_timeofday(0.5)
	build_room(size)
	local half = math.floor(size / 2)
	block_pos = {x = rng:next(1, size), y = 1, z = rng:next(half + 2, size)}
	core.set_node(block_pos, {name = BLOCK})
	done = {}
	for _, name in ipairs(craftium_ma.agents()) do
		local player = core.get_player_by_name(name)
		player:set_pos({x = rng:next(1, size), y = 0.5, z = rng:next(1, half)})
		player:set_look_horizontal(math.rad(rng:next(-60, 60)))
		player:set_look_vertical(0)
		player:set_hp(20)
		player:set_breath(player:get_properties().breath_max)
		-- no air to run out of here: the breath bar would only flicker
		player:hud_set_flags({breathbar = false})
	end
end)

local function state()
	local s = {block_pos.x, block_pos.z}
	for _, name in ipairs(craftium_ma.agents()) do
		local player = core.get_player_by_name(name)
		local p = player:get_pos()
		s[#s + 1], s[#s + 2], s[#s + 3] = p.x, p.z, player:get_look_horizontal()
	end
	return s
end

craftium_ma.register_on_step(function()
	for _, name in ipairs(craftium_ma.agents()) do
		if not done[name] then
			craftium_ma.add_reward(name, -1)
			local p = core.get_player_by_name(name):get_pos()
			if math.abs(p.x - block_pos.x) <= 0.85 and math.abs(p.z - block_pos.z) <= 0.85 then
				done[name] = true
				craftium_ma.set_termination(name)
			end
		end
	end
	craftium_ma.set_state(state())
end)

craftium_ma.register_on_reset(function()
	craftium_ma.set_state(state())
end)
