-- pressure_plates: the door to the goal room is open only while both plates
-- are held at once; any agent that gets through earns +1 for everyone.
--
-- Layout (floor at y = 0, walls y = 1 .. 3, seen from above, z grows upwards):
--   goal room   x 1 .. 9, z 9 .. 12 (green floor)
--   wall        z = 8, door at x = 5 (y = 1, 2)
--   start room  x 1 .. 9, z 1 .. 7; plate A (red) at x 2, z 2,
--               plate B (blue) at x 5, z 7, just in front of the door
-- An agent holds a plate while its collision box (0.6 wide) is over the plate,
-- and reaches the goal room when its centre passes the door's near face
-- (z > 7.5), which it can do while still holding plate B.
-- Option reward = "distance" adds a dense shaping term (see register_shaping below).

local WALL, FLOOR, DOOR = "default:stonebrick", "default:wood", "default:steelblock"
local GOAL_FLOOR = "wool:green"
local PLATES = {
	{x = 2, y = 0, z = 2, node = "wool:red"},
	{x = 5, y = 0, z = 7, node = "wool:blue"},
}
local DOOR_NODES = {{x = 5, y = 1, z = 8}, {x = 5, y = 2, z = 8}}
local DOOR_Z = 8
local REACH = 0.5 + 0.3  -- plate half width + player box half width

local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = 10, y = 4, z = 13}

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, wall = WALL, wall_height = 3,
		floor = function(_, z) return z > DOOR_Z and GOAL_FLOOR or FLOOR end,
		inner_wall = function(_, z) return z == DOOR_Z end})
	for _, plate in ipairs(PLATES) do
		core.set_node(plate, {name = plate.node})
	end
	for _, pos in ipairs(DOOR_NODES) do
		core.set_node(pos, {name = DOOR})
	end
end)

local function door_is_open()
	return core.get_node(DOOR_NODES[1]).name == "air"
end

local function set_door(open)
	if open ~= door_is_open() then
		for _, pos in ipairs(DOOR_NODES) do
			core.set_node(pos, {name = open and "air" or DOOR})
		end
	end
end

local function held(plate)
	for _, player in ipairs(craftium_ma.agent_players()) do
		local p = player:get_pos()
		if math.abs(p.x - plate.x) < REACH and math.abs(p.z - plate.z) < REACH and p.y < 1 then
			return true
		end
	end
	return false
end

-- reward = "distance": the potential of a state is minus SHAPING times the distance
-- (nodes, seen from above) from the plates to the pair of agents nearest them, one on
-- each; every step pays each agent its change. An episode's shaping sums to the last
-- potential less the first (it cannot be farmed), and walking onto the plates pays as it
-- happens, not only when the door is passed.
local SHAPING = 0.05
local REWARDS = {goal = true, distance = true}

local function distance(player, plate)
	local p = player:get_pos()
	return math.sqrt((p.x - plate.x) ^ 2 + (p.z - plate.z) ^ 2)
end

craftium_ma.register_shaping(function()
	if craftium_ma.options().reward ~= "distance" then
		return nil
	end
	local players, nearest = craftium_ma.agent_players(), math.huge
	for i, on_a in ipairs(players) do
		for j, on_b in ipairs(players) do
			if i ~= j then
				nearest = math.min(nearest, distance(on_a, PLATES[1]) + distance(on_b, PLATES[2]))
			end
		end
	end
	return -SHAPING * nearest
end)

craftium_ma.register_state(function() return {door_is_open() and 1 or 0} end,
	craftium_ma.agent_state({"x", "z", "yaw"}))

-- layout = "test": agent_0 on plate A, agent_1 two nodes before plate B, both
-- facing the door (+z); more agents at the right wall.
local function test_spawn(i, player)
	local spots = {{x = 2, z = 2}, {x = 5, z = 5}}
	local spot = spots[i] or {x = 8, z = 2 * i - 4}
	craftium_ma.spawn(player, {x = spot.x, y = 0.5, z = spot.z}, 0)
end

craftium_ma.register_on_reset(function(seed, options)
	if not REWARDS[options.reward] then
		error(("pressure_plates: option reward must be \"goal\" or \"distance\", not %q")
			:format(tostring(options.reward)))
	end
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	-- random free nodes of the start room, off the plates
	local spots = {}
	for x = 1, 9 do
		for z = 1, 6 do
			if not (x == PLATES[1].x and z == PLATES[1].z) then
				spots[#spots + 1] = {x = x, y = 0.5, z = z}
			end
		end
	end
	for i, player in ipairs(craftium_ma.agent_players()) do
		if options.layout == "test" then
			test_spawn(i, player)
		else
			local k = rng:next(i, #spots)
			spots[i], spots[k] = spots[k], spots[i]
			craftium_ma.spawn(player, spots[i], rng:next(0, 359))
		end
	end
end)

craftium_ma.register_on_step(function()
	-- the goal counts only through a door that was open when the step began
	if door_is_open() then
		for _, player in ipairs(craftium_ma.agent_players()) do
			if player:get_pos().z > DOOR_Z - 0.5 then
				for _, name in ipairs(craftium_ma.agents()) do
					craftium_ma.add_reward(name, 1)
				end
				craftium_ma.end_episode()
				break
			end
		end
	end
	set_door(held(PLATES[1]) and held(PLATES[2]))
end)
