-- xland: XLand-MiniGrid's rules and goals in a 3D grid world (docs/xland.md).
--
-- Python draws the episode's world (craftium_ma/xland/world.py) and passes it as
-- options.world, plain integer lists: the grid's walls, the objects, the agents'
-- cells and directions, each agent's goal and the rules, in the encoding of
-- craftium_ma/xland/encoding.py (constants.lua holds its ids and sizes, generated
-- from the Python). This mod builds it, plays the agents' actions one cell or 90
-- degrees at a time and applies the rules and goals in the step their event
-- happens.
--
-- Cell (x, z) of the grid is node (x, 1, z); the floor is at y = 0, walls fill
-- y = 1 .. 2, objects stand at y = 1. Directions: 0 north (+z), 1 east (+x),
-- 2 south (-z), 3 west (-x).

local C = dofile(core.get_modpath("xland") .. "/constants.lua")
local MAX_SIZE = C.max_size  -- the largest grid (3 x 3 rooms of 5 cells)
local WALL_HEIGHT = 2
local PITCH = 30     -- agents look down at the cells ahead
local EYE_HEIGHT = 1.2

local FLOOR, WALL, DOOR, KEY = C.tile.FLOOR, C.tile.WALL, C.tile.DOOR, C.tile.KEY
local RULE, GOAL = C.rule, C.goal
local OFFSETS = C.offsets  -- per direction: north, east, south, west
local YAWS = C.yaws        -- craftium_ma.spawn's degrees per direction

-- How each object colour looks.
local HEX = {red = "#e02020", green = "#20b020", blue = "#2848f0", purple = "#a030d0",
	yellow = "#f0e020", grey = "#8c8c8c", white = "#f8f8f8", orange = "#ff8a10"}

-- Shapes: node boxes on a cell, from the floor (y = -0.5) up.
local BOXES = {
	cube = {{-0.32, -0.5, -0.32, 0.32, 0.14, 0.32}},
	ball = {{-0.32, -0.38, -0.16, 0.32, 0.06, 0.16}, {-0.16, -0.38, -0.32, 0.16, 0.06, 0.32},
		{-0.16, -0.5, -0.16, 0.16, 0.18, 0.16}, {-0.26, -0.45, -0.26, 0.26, 0.13, 0.26}},
	pyramid = {{-0.4, -0.5, -0.4, 0.4, -0.3, 0.4}, {-0.29, -0.3, -0.29, 0.29, -0.1, 0.29},
		{-0.18, -0.1, -0.18, 0.18, 0.1, 0.18}, {-0.07, 0.1, -0.07, 0.07, 0.3, 0.07}},
	hexagon = {{-0.2, -0.5, -0.36, 0.2, 0.45, 0.36}, {-0.36, -0.5, -0.2, 0.36, 0.45, 0.2}},
	star = {{-0.45, -0.22, -0.08, 0.45, -0.06, 0.08}, {-0.08, -0.22, -0.45, 0.08, -0.06, 0.45},
		{-0.08, -0.5, -0.08, 0.08, 0.3, 0.08}},
	key = {{-0.04, -0.5, -0.04, 0.04, 0.0, 0.04}, {0.04, -0.42, -0.04, 0.2, -0.34, 0.04},
		{0.04, -0.26, -0.04, 0.16, -0.18, 0.04},
		{-0.2, 0.0, -0.04, 0.2, 0.08, 0.04}, {-0.2, 0.32, -0.04, 0.2, 0.4, 0.04},
		{-0.2, 0.0, -0.04, -0.12, 0.4, 0.04}, {0.12, 0.0, -0.04, 0.2, 0.4, 0.04},
		{-0.04, 0.0, -0.2, 0.04, 0.08, 0.2}, {-0.04, 0.32, -0.2, 0.04, 0.4, 0.2},
		{-0.04, 0.0, -0.2, 0.04, 0.4, -0.12}, {-0.04, 0.0, 0.12, 0.04, 0.4, 0.2}},
	door = {{-0.45, -0.5, -0.45, 0.45, 0.9, 0.45}, {-0.5, 0.9, -0.5, 0.5, 1.0, 0.5}},
	door_open = {{-0.5, -0.5, -0.5, -0.38, 1.0, -0.38}, {0.38, -0.5, -0.5, 0.5, 1.0, -0.38},
		{-0.5, -0.5, 0.38, -0.38, 1.0, 0.5}, {0.38, -0.5, 0.38, 0.5, 1.0, 0.5},
		{-0.5, 0.9, -0.5, 0.5, 1.0, 0.5}},
	pad = {{-0.5, -0.5, -0.5, 0.5, -0.42, 0.5}},
}

local function fill(colour)
	return "[fill:16x16:" .. colour
end

local function register_object(name, shape, colour, walkable)
	core.register_node(name, {
		description = shape,
		drawtype = "nodebox",
		node_box = {type = "fixed", fixed = BOXES[shape]},
		tiles = {fill(colour)},
		paramtype = "light",
		sunlight_propagates = true,
		walkable = walkable,
		pointable = false,
		diggable = false,
		is_ground_content = false,
		groups = {not_in_creative_inventory = 1},
	})
end

local node_of = {}   -- tile * 16 + colour -> node name
for _, tile in ipairs(C.object_shapes) do
	for _, colour in ipairs(C.object_colours) do
		local shape, colour_name = C.shape_name[tile], C.colour_name[colour]
		local name = "xland:" .. shape .. "_" .. colour_name
		register_object(name, shape, HEX[colour_name], not C.walkable[tile])
		node_of[tile * 16 + colour] = name
	end
end
for _, colour in ipairs(C.object_colours) do
	local colour_name = C.colour_name[colour]
	register_object("xland:door_open_" .. colour_name, "door_open", HEX[colour_name], false)
end

local function block(name, texture)
	core.register_node(name, {
		description = name,
		tiles = {texture},
		pointable = false,
		diggable = false,
		is_ground_content = false,
		groups = {not_in_creative_inventory = 1},
	})
end
-- the floor's cells have a darker rim, so a view shows the grid
block("xland:floor", fill("#262626") .. "^[fill:14x14:1,1:#3a3a3a")
block("xland:wall", fill("#6b5238") .. "^[fill:16x2:0,7:#58432e")

craftium_ma.register_area({x = 0, y = 0, z = 0}, {x = MAX_SIZE - 1, y = WALL_HEIGHT + 1,
	z = MAX_SIZE - 1}, function()
	for x = 0, MAX_SIZE - 1 do
		for z = 0, MAX_SIZE - 1 do
			core.set_node({x = x, y = 0, z = z}, {name = "xland:floor"})
		end
	end
end)

-- The episode's world -----------------------------------------------------------

local width, depth = 0, 0
local wall = {}       -- wall[x * MAX_SIZE + z]
local cell = {}       -- cell[x * MAX_SIZE + z] = {tile, colour} of the object there, or nil
local open = {}       -- open[x * MAX_SIZE + z]: the door there is open
local unlocked = {}   -- unlocked[x * MAX_SIZE + z]: the door there needs no key any more
local agents = {}     -- per agent, in order: {name, x, z, dir, held = {tile, colour} or nil, done,
                      -- shown = the node in its hand}
local goals = {}      -- per agent: {id, a_tile, a_colour, b_tile, b_colour}
local rules = {}      -- {id, a_tile, a_colour, b_tile, b_colour, c_tile, c_colour}
local mode = "cooperative"
local TEAMS = craftium_ma.task_teams()  -- the manifest's; competitive: agents dealt in turn
local dirty = {}      -- cells whose node must be written this step

local function index(x, z)
	return x * MAX_SIZE + z
end

local function inside(x, z)
	return x >= 0 and z >= 0 and x < width and z < depth
end

local function same(obj, tile, colour)
	return obj ~= nil and obj[1] == tile and obj[2] == colour
end

local function node_name(i)
	if wall[i] then
		return "xland:wall"
	end
	local obj = cell[i]
	if not obj then
		return "air"
	end
	if obj[1] == DOOR and open[i] then
		return "xland:door_open_" .. C.colour_name[obj[2]]
	end
	return node_of[obj[1] * 16 + obj[2]]
end

local function set_object(x, z, obj)
	local i = index(x, z)
	cell[i] = obj
	open[i], unlocked[i] = nil, nil
	dirty[#dirty + 1] = {x, z}
end

local function agent_at(x, z)
	for _, a in ipairs(agents) do
		if a.x == x and a.z == z then
			return a
		end
	end
end

-- An agent may enter a cell without wall, other agent or object, except pads and open doors.
local function walkable(x, z)
	if not inside(x, z) or wall[index(x, z)] or agent_at(x, z) then
		return false
	end
	local obj = cell[index(x, z)]
	return obj == nil or C.walkable[obj[1]] or (obj[1] == DOOR and open[index(x, z)])
end

local function ahead(a)
	local d = OFFSETS[a.dir + 1]
	return a.x + d[1], a.z + d[2]
end

-- The direction the player's camera faces: its yaw (radians, 0 north, growing to
-- the west) in steps of 90 degrees.
local function direction_of(player)
	local quarter = math.floor(player:get_look_horizontal() / (math.pi / 2) + 0.5) % 4
	return (4 - quarter) % 4
end

-- The agent's player at its cell, facing its direction, with its object in hand.
-- A turn's camera move is the client's own; the task's direction is the one that
-- counts, and is sent to the client where they differ (a pipelined client gets the
-- last step's position, and with it its yaw, after it turned). The yaw is set before
-- the position, which sends it along.
local function show_agent(a, player, moved)
	if moved or direction_of(player) ~= a.dir then
		player:set_look_horizontal(math.rad(YAWS[a.dir + 1]))
	end
	if moved then
		player:set_pos({x = a.x, y = 0.5, z = a.z})
	end
	local item = a.held and node_of[a.held[1] * 16 + a.held[2]] or ""
	if item ~= a.shown then  -- the hand goes to the client only when it changes
		craftium_ma.give(player, item ~= "" and {item} or {})
		a.shown = item
	end
end

-- Actions, read from the keys of the manifest's actions ---------------------------

local function pick_up(a)
	local x, z = ahead(a)
	local obj = inside(x, z) and cell[index(x, z)]
	if a.held or not obj or not C.pickable[obj[1]] or agent_at(x, z) then
		return
	end
	a.held = obj
	set_object(x, z, nil)
end

local function put_down(a)
	local x, z = ahead(a)
	if not a.held or not inside(x, z) or wall[index(x, z)] or cell[index(x, z)] or agent_at(x, z) then
		return
	end
	set_object(x, z, a.held)
	a.held = nil
end

local function toggle(a)
	local x, z = ahead(a)
	local i = index(x, z)
	local obj = inside(x, z) and cell[i]
	if not obj or obj[1] ~= DOOR or agent_at(x, z) then
		return
	end
	if open[i] then
		open[i] = nil
	elseif unlocked[i] or same(a.held, KEY, obj[2]) then
		open[i], unlocked[i] = true, true
	end
	dirty[#dirty + 1] = {x, z}
end

local function act(a, control)
	if control.up then
		local x, z = ahead(a)
		if walkable(x, z) then
			a.x, a.z = x, z
		end
	elseif control.left then
		a.dir = (a.dir + 3) % 4
	elseif control.right then
		a.dir = (a.dir + 1) % 4
	elseif control.aux1 then
		pick_up(a)
	elseif control.down then
		put_down(a)
	elseif control.jump then
		toggle(a)
	end
end

-- Rules -------------------------------------------------------------------------

local function product(rule)
	if rule[6] == C.vanish[1] and rule[7] == C.vanish[2] then
		return nil  -- (floor, none): the inputs vanish
	end
	return {rule[6], rule[7]}
end

-- The first cell (x-major) holding (tile, colour) with (tile2, colour2) at one of
-- the offsets; returns both cells.
local function find_pair(tile, colour, tile2, colour2, offsets)
	for x = 0, width - 1 do
		for z = 0, depth - 1 do
			if same(cell[index(x, z)], tile, colour) then
				for _, d in ipairs(offsets) do
					local bx, bz = x + d[1], z + d[2]
					if inside(bx, bz) and same(cell[index(bx, bz)], tile2, colour2) then
						return x, z, bx, bz
					end
				end
			end
		end
	end
end

local function replace_near_agent(a, rule, offsets)
	for _, d in ipairs(offsets) do
		local x, z = a.x + d[1], a.z + d[2]
		if inside(x, z) and same(cell[index(x, z)], rule[2], rule[3]) then
			set_object(x, z, product(rule))
		end
	end
end

local function apply_rule(a, rule)
	local id = rule[1]
	if id == RULE.AGENT_HOLD then
		if same(a.held, rule[2], rule[3]) then
			a.held = product(rule)
		end
	elseif id == RULE.AGENT_NEAR then
		replace_near_agent(a, rule, OFFSETS)
	elseif id >= RULE.AGENT_NEAR_UP and id <= RULE.AGENT_NEAR_UP + 3 then
		replace_near_agent(a, rule, {OFFSETS[id - RULE.AGENT_NEAR_UP + 1]})
	elseif id >= RULE.TILE_NEAR and id <= RULE.TILE_NEAR_UP + 3 then
		local offsets = id == RULE.TILE_NEAR and OFFSETS or {OFFSETS[id - RULE.TILE_NEAR_UP + 1]}
		local x, z, bx, bz = find_pair(rule[2], rule[3], rule[4], rule[5], offsets)
		if x then
			set_object(bx, bz, nil)
			set_object(x, z, product(rule))
		end
	end
end

-- Goals -------------------------------------------------------------------------

local function near_agent(a, tile, colour, offsets)
	for _, d in ipairs(offsets) do
		local x, z = a.x + d[1], a.z + d[2]
		if inside(x, z) and same(cell[index(x, z)], tile, colour) then
			return true
		end
	end
	return false
end

local function achieved(a, g)
	local id = g[1]
	if id == GOAL.AGENT_HOLD then
		return same(a.held, g[2], g[3])
	elseif id == GOAL.AGENT_ON_TILE then
		return same(cell[index(a.x, a.z)], g[2], g[3])
	elseif id == GOAL.AGENT_NEAR then
		return near_agent(a, g[2], g[3], OFFSETS)
	elseif id == GOAL.TILE_NEAR then
		return find_pair(g[2], g[3], g[4], g[5], OFFSETS) ~= nil
	elseif id == GOAL.TILE_ON_POSITION then
		return inside(g[4], g[5]) and same(cell[index(g[4], g[5])], g[2], g[3])
	elseif id == GOAL.AGENT_ON_POSITION then
		return a.x == g[2] and a.z == g[3]
	elseif id >= GOAL.TILE_NEAR_UP and id <= GOAL.TILE_NEAR_UP + 3 then
		return find_pair(g[2], g[3], g[4], g[5], {OFFSETS[id - GOAL.TILE_NEAR_UP + 1]}) ~= nil
	elseif id >= GOAL.AGENT_NEAR_UP and id <= GOAL.AGENT_NEAR_UP + 3 then
		return near_agent(a, g[2], g[3], {OFFSETS[id - GOAL.AGENT_NEAR_UP + 1]})
	end
	return false
end

-- Cooperative: one goal, reached by any agent, rewards everyone. Competitive: the
-- teams' goals; a team reaches its goal when any member does, and every team that
-- reached its goal this step gets the reward, the others its negative. Both end the
-- episode. Independent: each agent's own goal, reward and termination.
local function score(reward)
	local reached = {}
	for i, a in ipairs(agents) do
		reached[i] = not a.done and achieved(a, goals[i])
	end
	if mode == "independent" then
		for i, a in ipairs(agents) do
			if reached[i] then
				craftium_ma.add_reward(a.name, reward)
				craftium_ma.set_termination(a.name)
				a.done = true
			end
		end
	elseif mode == "competitive" then
		local winners = {}
		for i, a in ipairs(agents) do
			if reached[i] then
				winners[craftium_ma.team_of(a.name)] = true
			end
		end
		if next(winners) then
			for _, t in ipairs(TEAMS) do
				craftium_ma.add_team_reward(t, winners[t] and reward or -reward)
			end
			craftium_ma.end_episode()
		end
	else
		for i in ipairs(agents) do
			if reached[i] then
				for _, a in ipairs(agents) do
					craftium_ma.add_reward(a.name, reward)
				end
				craftium_ma.end_episode()
				return
			end
		end
	end
end

local function write_dirty()
	for _, c in ipairs(dirty) do
		core.set_node({x = c[1], y = 1, z = c[2]}, {name = node_name(index(c[1], c[2]))})
	end
	dirty = {}
end

-- Episode -----------------------------------------------------------------------

local function chunks(list, size)
	local out = {}
	for i = 1, #(list or {}), size do
		out[#out + 1] = {unpack(list, i, i + size - 1)}
	end
	return out
end

local function build()
	local minp, maxp = {x = 0, y = 0, z = 0}, {x = MAX_SIZE - 1, y = WALL_HEIGHT, z = MAX_SIZE - 1}
	craftium_ma.edit_nodes(minp, maxp, function(nodes)
		for x = 0, MAX_SIZE - 1 do
			for z = 0, MAX_SIZE - 1 do
				local i = index(x, z)
				nodes.set(x, 1, z, node_name(i))
				nodes.set(x, 2, z, wall[i] and "xland:wall" or "air")
			end
		end
	end)
end

local function load_world(world)
	width, depth = world.width, world.depth
	wall, cell, open, unlocked, dirty = {}, {}, {}, {}, {}
	for x = 0, width - 1 do
		for z = 0, depth - 1 do
			wall[index(x, z)] = world.walls[x * depth + z + 1] == 1
		end
	end
	for _, o in ipairs(chunks(world.objects, 4)) do
		cell[index(o[1], o[2])] = {o[3], o[4]}
	end
	goals = chunks(world.goals, 5)
	rules = chunks(world.rules, 7)
	agents = {}
	local spots = chunks(world.agents, 3)
	for i, name in ipairs(craftium_ma.agents()) do
		agents[i] = {name = name, x = spots[i][1], z = spots[i][2], dir = spots[i][3], held = nil,
			done = false}
	end
end

-- Without a world from Python (a session driven without XLandEnv): an empty 9 x 9
-- room, the agents in a row facing north, no goal, no rules.
local function empty_world()
	local walls = {}
	for x = 0, 10 do
		for z = 0, 10 do
			walls[#walls + 1] = (x == 0 or z == 0 or x == 10 or z == 10) and 1 or 0
		end
	end
	local spots, no_goals = {}, {}
	for i in ipairs(craftium_ma.agents()) do
		spots[#spots + 1], spots[#spots + 2], spots[#spots + 3] = i, 1, 0
		for _ = 1, 5 do
			no_goals[#no_goals + 1] = 0
		end
	end
	return {width = 11, depth = 11, walls = walls, objects = {}, agents = spots, goals = no_goals,
		rules = {}}
end

craftium_ma.register_on_reset(function(_, options)
	core.set_timeofday(0.5)
	mode = options.mode
	load_world(options.world or empty_world())
	build()
	if mode == "competitive" then
		craftium_ma.split_teams(TEAMS)
	end
	for _, a in ipairs(agents) do
		local player = core.get_player_by_name(a.name)
		player:set_physics_override({speed = 0, jump = 0, sneak = false})
		player:set_properties({eye_height = EYE_HEIGHT})
		craftium_ma.spawn(player, {x = a.x, y = 0.5, z = a.z}, YAWS[a.dir + 1], PITCH)
		show_agent(a, player, false)
	end
end)

craftium_ma.register_on_step(function()
	for _, a in ipairs(agents) do
		if not a.done then
			local x, z = a.x, a.z
			local player = core.get_player_by_name(a.name)
			act(a, player:get_player_control())
			for _, rule in ipairs(rules) do
				apply_rule(a, rule)
			end
			show_agent(a, player, x ~= a.x or z ~= a.z)
		end
	end
	write_dirty()
	local t, T = craftium_ma.step_count(), craftium_ma.max_cycles()
	score(1 - 0.9 * t / T)
end)

-- state(): the grid (width, depth, then tile and colour of every cell of the
-- largest grid, x-major) and each agent's x, z, direction and held object.
craftium_ma.register_state(function()
	local s = {width, depth}
	for x = 0, MAX_SIZE - 1 do
		for z = 0, MAX_SIZE - 1 do
			local i = index(x, z)
			local obj = cell[i]
			if not inside(x, z) then
				s[#s + 1], s[#s + 2] = 0, 0
			elseif wall[i] then
				s[#s + 1], s[#s + 2] = WALL, 0
			elseif obj then
				s[#s + 1], s[#s + 2] = obj[1], obj[2]
			else
				s[#s + 1], s[#s + 2] = FLOOR, 0
			end
		end
	end
	return s
end, function(player)
	for _, a in ipairs(agents) do
		if a.name == player:get_player_name() then
			return {a.x, a.z, a.dir, a.held and a.held[1] or 0, a.held and a.held[2] or 0}
		end
	end
	return {0, 0, 0, 0, 0}
end)
