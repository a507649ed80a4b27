-- room and small_room: find the red block. Option size: the room's inside is
-- size x size nodes (x, z in 1 .. size), its floor at y = 0.

local MAX_SIZE = 30
local WALL, FLOOR, BLOCK = "default:stonebrick", "default:wood", "wool:red"
local block_pos
local done = {}  -- agents that touched the block this episode

craftium_ma.register_area({x = 0, y = 0, z = 0}, {x = MAX_SIZE + 1, y = 4, z = MAX_SIZE + 1})

craftium_ma.register_on_reset(function(seed, options)
	local size = math.max(4, math.min(tonumber(options.size) or 16, MAX_SIZE))
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	-- the reset restored the area empty: the room of this episode's size
	craftium_ma.walled_arena({minp = {x = 0, y = 0, z = 0}, maxp = {x = size + 1, y = 3, z = size + 1},
		floor = FLOOR, wall = WALL})
	local half = math.floor(size / 2)
	block_pos = {x = rng:next(1, size), y = 1, z = rng:next(half + 2, size)}
	core.set_node(block_pos, {name = BLOCK})
	done = {}
	local spots = craftium_ma.random_positions({x = 1, y = 0.5, z = 1}, {x = size, y = 0.5, z = half},
		#craftium_ma.agents())
	for i, player in ipairs(craftium_ma.agent_players()) do
		craftium_ma.spawn(player, spots[i], rng:next(-60, 60))
	end
end)

craftium_ma.register_state(function() return {block_pos.x, block_pos.z} end,
	craftium_ma.agent_state({"x", "z", "yaw"}))

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
end)
