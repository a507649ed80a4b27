-- xland: XLand-MiniGrid's step in a 3D grid world (docs/xland.md).
--
-- Python draws the episode's world (craftium_ma/xland/world.py) and passes it as
-- options.world, plain integer lists in XLand-MiniGrid's encoding: the grid's
-- (tile, colour) cells row by row, each agent's (row, column, direction) and
-- pocket, each agent's goal and the rules (constants.lua holds the ids, generated
-- from the Python). Each step, agent by agent in order, this mod takes the
-- agent's action, then fires the rules as XLand-MiniGrid does after that action;
-- then, the step counted, it checks each agent's goal for the action it took.
--
-- Cell (row, col) of a grid of height H is node (col, 1, H - 1 - row): row 0 is
-- the north edge. The floor is at y = 0, walls fill y = 1 .. 2, objects stand at
-- y = 1. Directions: 0 up (north, row - 1), 1 right (east), 2 down, 3 left.

local C = dofile(core.get_modpath("xland") .. "/constants.lua")
local MAX_SIZE = C.max_size
local WALL_HEIGHT = 2
local PITCH = 30     -- agents look down at the cells ahead
local EYE_HEIGHT = 1.2
local VIEW_SIZE = 5  -- the symbolic view's side, XLand-MiniGrid's for XLand
local RULE_ROWS = 18 -- the rules observation's rows: the most the generator's top level makes

local T, RULE, GOAL, ACT = C.tile, C.rule, C.goal, C.action
local DIRS = C.directions  -- per direction: {row offset, column offset}
local FLOOR = C.floor      -- (floor, black): an empty cell
local NOTHING = {0, 0}     -- outside the grid; an empty pocket

-- How each colour looks, by XLand-MiniGrid's colour id.
local HEX = {[0] = "#303030", "#e02020", "#20b020", "#2848f0", "#a030d0", "#f0e020",
	"#8c8c8c", "#101010", "#ff8a10", "#f8f8f8", "#8b5a2b", "#ff8cc8"}
local COLOUR_NAME = {}
for name, id in pairs(C.colour) do
	if name ~= "NONE" then
		COLOUR_NAME[id] = name:lower()
	end
end

-- Tiles with a node, as node boxes on a cell from the floor (y = -0.5) up.
local DOOR = {{-0.45, -0.5, -0.45, 0.45, 0.9, 0.45}, {-0.5, 0.9, -0.5, 0.5, 1.0, 0.5}}
local SHAPES = {
	[T.SQUARE] = {"square", {{-0.32, -0.5, -0.32, 0.32, 0.14, 0.32}}},
	[T.BALL] = {"ball", {{-0.32, -0.38, -0.16, 0.32, 0.06, 0.16},
		{-0.16, -0.38, -0.32, 0.16, 0.06, 0.32}, {-0.16, -0.5, -0.16, 0.16, 0.18, 0.16},
		{-0.26, -0.45, -0.26, 0.26, 0.13, 0.26}}},
	[T.PYRAMID] = {"pyramid", {{-0.4, -0.5, -0.4, 0.4, -0.3, 0.4},
		{-0.29, -0.3, -0.29, 0.29, -0.1, 0.29}, {-0.18, -0.1, -0.18, 0.18, 0.1, 0.18},
		{-0.07, 0.1, -0.07, 0.07, 0.3, 0.07}}},
	[T.HEX] = {"hex", {{-0.2, -0.5, -0.36, 0.2, 0.45, 0.36}, {-0.36, -0.5, -0.2, 0.36, 0.45, 0.2}}},
	[T.STAR] = {"star", {{-0.45, -0.22, -0.08, 0.45, -0.06, 0.08},
		{-0.08, -0.22, -0.45, 0.08, -0.06, 0.45}, {-0.08, -0.5, -0.08, 0.08, 0.3, 0.08}}},
	[T.KEY] = {"key", {{-0.04, -0.5, -0.04, 0.04, 0.0, 0.04}, {0.04, -0.42, -0.04, 0.2, -0.34, 0.04},
		{0.04, -0.26, -0.04, 0.16, -0.18, 0.04},
		{-0.2, 0.0, -0.04, 0.2, 0.08, 0.04}, {-0.2, 0.32, -0.04, 0.2, 0.4, 0.04},
		{-0.2, 0.0, -0.04, -0.12, 0.4, 0.04}, {0.12, 0.0, -0.04, 0.2, 0.4, 0.04},
		{-0.04, 0.0, -0.2, 0.04, 0.08, 0.2}, {-0.04, 0.32, -0.2, 0.04, 0.4, 0.2},
		{-0.04, 0.0, -0.2, 0.04, 0.4, -0.12}, {-0.04, 0.0, 0.12, 0.04, 0.4, 0.2}}},
	-- a pad with a raised square
	[T.GOAL] = {"goal", {{-0.5, -0.5, -0.5, 0.5, -0.42, 0.5},
		{-0.25, -0.42, -0.25, 0.25, -0.3, 0.25}}},
	[T.DOOR_CLOSED] = {"door_closed", DOOR},
	[T.DOOR_LOCKED] = {"door_locked", DOOR},  -- with a dark band (below)
	-- the frame only
	[T.DOOR_OPEN] = {"door_open", {{-0.5, -0.5, -0.5, -0.38, 1.0, -0.38},
		{0.38, -0.5, -0.5, 0.5, 1.0, -0.38}, {-0.5, -0.5, 0.38, -0.38, 1.0, 0.5},
		{0.38, -0.5, 0.38, 0.5, 1.0, 0.5}, {-0.5, 0.9, -0.5, 0.5, 1.0, 0.5}}},
}

local function fill(colour)
	return "[fill:16x16:" .. colour
end

local node_of = {}   -- tile * 16 + colour -> node name; floor and empty cells are air
local function node_def(description, texture)
	return {description = description, tiles = {texture}, pointable = false, diggable = false,
		is_ground_content = false, groups = {not_in_creative_inventory = 1}}
end
for colour, colour_name in pairs(COLOUR_NAME) do
	for tile, shape in pairs(SHAPES) do
		local name = "xland:" .. shape[1] .. "_" .. colour_name
		local texture = fill(HEX[colour])
		if tile == T.DOOR_LOCKED then  -- a dark band across: the lock
			texture = texture .. "^[fill:16x5:0,5:#000000a0"
		end
		local def = node_def(colour_name .. " " .. shape[1], texture)
		def.drawtype, def.node_box = "nodebox", {type = "fixed", fixed = shape[2]}
		def.paramtype, def.sunlight_propagates, def.walkable = "light", true, false
		core.register_node(name, def)
		node_of[tile * 16 + colour] = name
	end
	local wall = "xland:wall_" .. colour_name
	core.register_node(wall, node_def(wall, fill(HEX[colour]) .. "^[fill:16x2:0,7:#00000040"))
	node_of[T.WALL * 16 + colour] = wall
end
-- the floor's cells have a darker rim, so a view shows the grid; a floor in the
-- hand (a vanished object) is shown as this block
core.register_node("xland:floor", node_def("floor", fill("#4a4a4a") .. "^[fill:14x14:1,1:#5e5e5e"))

craftium_ma.register_area({x = 0, y = 0, z = 0}, {x = MAX_SIZE - 1, y = WALL_HEIGHT + 1,
	z = MAX_SIZE - 1}, function()
	for x = 0, MAX_SIZE - 1 do
		for z = 0, MAX_SIZE - 1 do
			core.set_node({x = x, y = 0, z = z}, {name = "xland:floor"})
		end
	end
end)

-- The episode's world -----------------------------------------------------------

local height, width = 0, 0
local grid = {}       -- grid[row * MAX_SIZE + col] = {tile, colour}
local agents = {}     -- per agent, in order: {name, row, col, dir, pocket = {tile, colour},
                      -- done, shown = the item in its hand}
local goals = {}      -- per agent: {id, a_tile, a_colour, b_tile, b_colour}
local rules = {}      -- {id, ...}: XLand-MiniGrid's 7 values
local mode = "cooperative"
local TEAMS = craftium_ma.task_teams()  -- the manifest's; competitive: agents dealt in turn
local dirty = {}      -- cells whose node must be written this step

local function inside(row, col)
	return row >= 0 and col >= 0 and row < height and col < width
end

-- The (tile, colour) of a cell; (0, 0) outside the grid, as XLand-MiniGrid reads it.
local function get(row, col)
	return inside(row, col) and grid[row * MAX_SIZE + col] or NOTHING
end

local function set(row, col, obj)
	if inside(row, col) then
		grid[row * MAX_SIZE + col] = {obj[1], obj[2]}
		dirty[#dirty + 1] = {row, col}
	end
end

local function same(a, b)
	return a[1] == b[1] and a[2] == b[2]
end

-- The agent standing on a cell, if any (agents block each other: our extension).
local function agent_at(row, col)
	for _, a in ipairs(agents) do
		if a.row == row and a.col == col then
			return a
		end
	end
end

-- The cell in front of the agent.
local function ahead(a)
	local d = DIRS[a.dir + 1]
	return a.row + d[1], a.col + d[2]
end

local function node_pos(row, col, y)
	return {x = col, y = y, z = height - 1 - row}
end

local function node_name(row, col)
	local obj = get(row, col)
	return node_of[obj[1] * 16 + obj[2]] or "air"
end

-- The direction the player's camera faces: its yaw (radians, 0 north, growing to
-- the west) in steps of 90 degrees.
local function direction_of(player)
	local quarter = math.floor(player:get_look_horizontal() / (math.pi / 2) + 0.5) % 4
	return (4 - quarter) % 4
end

-- The agent's player at its cell, facing its direction, with its pocket in hand.
-- A turn's camera move is the client's own; the task's direction is the one that
-- counts, and is sent to the client where they differ (a pipelined client gets the
-- last step's position, and with it its yaw, after it turned). The yaw is set before
-- the position, which sends it along.
local function show_agent(a, player, moved)
	if moved or direction_of(player) ~= a.dir then
		player:set_look_horizontal(math.rad(C.yaws[a.dir + 1]))
	end
	if moved then
		player:set_pos(node_pos(a.row, a.col, 0.5))
	end
	local item = a.pocket[1] == T.FLOOR and "xland:floor" or node_of[a.pocket[1] * 16 + a.pocket[2]]
	item = item or ""
	if item ~= a.shown then  -- the hand goes to the client only when it changes
		craftium_ma.give(player, item ~= "" and {item} or {})
		a.shown = item
	end
end

-- Actions: XLand-MiniGrid's take_action; each returns the cell it concerns -------

local function forward(a)
	local row, col = ahead(a)
	row, col = math.min(math.max(row, 0), height - 1), math.min(math.max(col, 0), width - 1)
	if C.walkable[get(row, col)[1]] and not agent_at(row, col) then
		a.row, a.col = row, col
	end
	return a.row, a.col
end

local function pick_up(a)
	local row, col = ahead(a)
	local obj = get(row, col)
	if C.pickable[obj[1]] and a.pocket[1] == T.EMPTY then
		a.pocket = {obj[1], obj[2]}
		set(row, col, FLOOR)
	end
	return row, col
end

local function put_down(a)
	local row, col = ahead(a)
	if get(row, col)[1] == T.FLOOR and a.pocket[1] ~= T.EMPTY and not agent_at(row, col) then
		set(row, col, a.pocket)
		a.pocket = {0, 0}
	end
	return row, col
end

local function toggle(a)
	local row, col = ahead(a)
	local obj = get(row, col)
	if obj[1] == T.DOOR_LOCKED and same(a.pocket, {T.KEY, obj[2]}) or obj[1] == T.DOOR_CLOSED then
		set(row, col, {T.DOOR_OPEN, obj[2]})
	elseif obj[1] == T.DOOR_OPEN and not agent_at(row, col) then
		set(row, col, {T.DOOR_CLOSED, obj[2]})
	end
	return row, col
end

-- The action of the keys the manifest's action holds.
local function action_of(control)
	if control.up then
		return ACT.FORWARD
	elseif control.right then
		return ACT.TURN_RIGHT
	elseif control.left then
		return ACT.TURN_LEFT
	elseif control.aux1 then
		return ACT.PICK_UP
	elseif control.down then
		return ACT.PUT_DOWN
	elseif control.jump then
		return ACT.TOGGLE
	end
	return ACT.NOOP
end

local function act(a, action)
	if action == ACT.FORWARD then
		return forward(a)
	elseif action == ACT.TURN_RIGHT then
		a.dir = (a.dir + 1) % 4
	elseif action == ACT.TURN_LEFT then
		a.dir = (a.dir + 3) % 4
	elseif action == ACT.PICK_UP then
		return pick_up(a)
	elseif action == ACT.PUT_DOWN then
		return put_down(a)
	elseif action == ACT.TOGGLE then
		return toggle(a)
	end
	return a.row, a.col
end

-- Rules: XLand-MiniGrid's check_rule, in list order ---------------------------

-- The four neighbours of a cell (up, right, down, left) as they are now.
local function neighbours(row, col)
	local out = {}
	for d = 1, 4 do
		out[d] = get(row + DIRS[d][1], col + DIRS[d][2])
	end
	return out
end

-- A tile-near rule on the cell an object was put down on: where the object there
-- and a neighbour in one of the directions `dirs` (1-based; nil: all four) are its
-- inputs, the neighbour becomes the product and the cell floor. With a direction, b
-- lies that way of a.
local function tile_near_rule(rule, row, col, dir)
	local a, b, product = {rule[2], rule[3]}, {rule[4], rule[5]}, {rule[6], rule[7]}
	local tile, around = get(row, col), neighbours(row, col)
	if not (same(tile, a) or same(tile, b)) then
		return
	end
	local function fire(d)
		set(row + DIRS[d][1], col + DIRS[d][2], product)
		set(row, col, FLOOR)
	end
	if not dir then
		for d = 1, 4 do
			if same(tile, a) and same(around[d], b) or same(tile, b) and same(around[d], a) then
				fire(d)
			end
		end
		return
	end
	local back = (dir + 1) % 4 + 1
	if same(tile, b) and same(around[back], a) then
		fire(back)
	end
	if same(tile, a) and same(around[dir], b) then
		fire(dir)
	end
end

local function apply_rule(rule, a, action, row, col)
	local id, input = rule[1], {rule[2], rule[3]}
	if id == RULE.AGENT_HOLD then
		if action == ACT.PICK_UP and same(a.pocket, input) then
			a.pocket = {rule[4], rule[5]}
		end
	elseif id == RULE.AGENT_NEAR then
		if action == ACT.FORWARD then
			local around = neighbours(a.row, a.col)
			for d = 1, 4 do
				if same(around[d], input) then
					set(a.row + DIRS[d][1], a.col + DIRS[d][2], {rule[4], rule[5]})
				end
			end
		end
	elseif id >= RULE.AGENT_NEAR_UP and id <= RULE.AGENT_NEAR_LEFT then
		local d = DIRS[id - RULE.AGENT_NEAR_UP + 1]
		if (action == ACT.FORWARD or action == ACT.PUT_DOWN) and
				same(get(a.row + d[1], a.col + d[2]), input) then
			set(a.row + d[1], a.col + d[2], {rule[4], rule[5]})
		end
	elseif id == RULE.TILE_NEAR then
		if action == ACT.PUT_DOWN then
			tile_near_rule(rule, row, col, nil)
		end
	elseif id >= RULE.TILE_NEAR_UP and id <= RULE.TILE_NEAR_LEFT then
		if action == ACT.PUT_DOWN then
			tile_near_rule(rule, row, col, id - RULE.TILE_NEAR_UP + 1)
		end
	end
end

-- Goals: XLand-MiniGrid's check_goal, after the action taken -------------------

local function tile_near_goal(goal, row, col, dir)
	local a, b = {goal[2], goal[3]}, {goal[4], goal[5]}
	local tile, around = get(row, col), neighbours(row, col)
	if not dir then
		local partner = same(tile, a) and b or same(tile, b) and a
		if not partner then
			return false
		end
		for d = 1, 4 do
			if same(around[d], partner) then
				return true
			end
		end
		return false
	end
	local back = (dir + 1) % 4 + 1
	return same(tile, b) and same(around[back], a) or same(tile, a) and same(around[dir], b)
end

local function achieved(a, goal, action, row, col)
	local id, input = goal[1], {goal[2], goal[3]}
	if id == GOAL.AGENT_HOLD then
		return action == ACT.PICK_UP and same(a.pocket, input)
	elseif id == GOAL.AGENT_ON_TILE then
		return action == ACT.FORWARD and same(get(a.row, a.col), input)
	elseif id == GOAL.AGENT_NEAR then
		if action ~= ACT.FORWARD then
			return false
		end
		for _, tile in ipairs(neighbours(a.row, a.col)) do
			if same(tile, input) then
				return true
			end
		end
		return false
	elseif id == GOAL.TILE_NEAR then
		return action == ACT.PUT_DOWN and tile_near_goal(goal, row, col, nil)
	elseif id == GOAL.TILE_ON_POSITION then
		return same(get(goal[4], goal[5]), input)
	elseif id == GOAL.AGENT_ON_POSITION then
		return a.row == goal[2] and a.col == goal[3]
	elseif id >= GOAL.TILE_NEAR_UP and id <= GOAL.TILE_NEAR_LEFT then
		return action == ACT.PUT_DOWN and tile_near_goal(goal, row, col, id - GOAL.TILE_NEAR_UP + 1)
	elseif id >= GOAL.AGENT_NEAR_UP and id <= GOAL.AGENT_NEAR_LEFT then
		local d = DIRS[id - GOAL.AGENT_NEAR_UP + 1]
		return (action == ACT.FORWARD or action == ACT.PUT_DOWN) and
			same(get(a.row + d[1], a.col + d[2]), input)
	end
	return false
end

-- Cooperative: one goal, reached by any agent, rewards everyone. Competitive: the
-- teams' goals; a team reaches its goal when any member does, and every team that
-- reached its goal this step gets the reward, the others its negative. Both end the
-- episode. Independent: each agent's own goal, reward and termination.
local function score(reached, reward)
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
	elseif next(reached) then
		for _, a in ipairs(agents) do
			craftium_ma.add_reward(a.name, reward)
		end
		craftium_ma.end_episode()
	end
end

local function write_dirty()
	for _, c in ipairs(dirty) do
		core.set_node(node_pos(c[1], c[2], 1), {name = node_name(c[1], c[2])})
	end
	dirty = {}
end

-- XLand-MiniGrid's observation: the VIEW_SIZE x VIEW_SIZE cells ahead of the agent
-- (it sits in the middle of the last row), through walls, (0, 0) outside the grid;
-- rows first, (tile, colour) per cell.
local function symbolic(a)
	local f, r = DIRS[a.dir + 1], DIRS[(a.dir + 1) % 4 + 1]
	local half, out = math.floor(VIEW_SIZE / 2), {}
	for i = 0, VIEW_SIZE - 1 do
		for j = 0, VIEW_SIZE - 1 do
			local k, m = VIEW_SIZE - 1 - i, j - half
			local cell = get(a.row + k * f[1] + m * r[1], a.col + k * f[2] + m * r[2])
			out[#out + 1], out[#out + 2] = cell[1], cell[2]
		end
	end
	return out
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
	local minp, maxp = {x = 0, y = 1, z = 0}, {x = MAX_SIZE - 1, y = WALL_HEIGHT, z = MAX_SIZE - 1}
	craftium_ma.edit_nodes(minp, maxp, function(nodes)
		nodes.fill(minp, maxp, "air")
		for row = 0, height - 1 do
			for col = 0, width - 1 do
				local pos, name = node_pos(row, col, 1), node_name(row, col)
				nodes.set(pos.x, 1, pos.z, name)
				if get(row, col)[1] == T.WALL then
					nodes.set(pos.x, 2, pos.z, name)
				end
			end
		end
	end)
end

local function load_world(world)
	height, width = world.height, world.width
	grid, dirty = {}, {}
	for row = 0, height - 1 do
		for col = 0, width - 1 do
			local i = 2 * (row * width + col) + 1
			grid[row * MAX_SIZE + col] = {world.grid[i], world.grid[i + 1]}
		end
	end
	goals = chunks(world.goals, 5)
	rules = chunks(world.rules, 7)
	agents = {}
	local spots, pockets = chunks(world.agents, 3), chunks(world.pockets, 2)
	for i, name in ipairs(craftium_ma.agents()) do
		agents[i] = {name = name, row = spots[i][1], col = spots[i][2], dir = spots[i][3],
			pocket = pockets[i], done = false}
	end
end

-- Without a world from Python (a session driven without XLandEnv): an empty 9 x 9
-- room, the agents in the bottom rows facing up, no goal, no rules.
local function empty_world()
	local cells, spots, pockets, no_goals = {}, {}, {}, {}
	for row = 0, 8 do
		for col = 0, 8 do
			local wall = row == 0 or col == 0 or row == 8 or col == 8
			cells[#cells + 1] = wall and T.WALL or T.FLOOR
			cells[#cells + 1] = wall and C.colour.GREY or C.colour.BLACK
		end
	end
	for i in ipairs(craftium_ma.agents()) do
		for _, v in ipairs({7 - math.floor((i - 1) / 7), (i - 1) % 7 + 1, 0}) do
			spots[#spots + 1] = v
		end
		pockets[#pockets + 1], pockets[#pockets + 2] = 0, 0
		for _ = 1, 5 do
			no_goals[#no_goals + 1] = 0
		end
	end
	return {height = 9, width = 9, grid = cells, agents = spots, pockets = pockets,
		goals = no_goals, rules = {}}
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
		craftium_ma.spawn(player, node_pos(a.row, a.col, 0.5), C.yaws[a.dir + 1], PITCH)
		show_agent(a, player, false)
	end
end)

craftium_ma.register_on_step(function()
	local taken = {}  -- per agent: the action and the cell it concerned
	for i, a in ipairs(agents) do
		if not a.done then
			local row, col = a.row, a.col
			local player = core.get_player_by_name(a.name)
			local action = action_of(player:get_player_control())
			local cell_row, cell_col = act(a, action)
			for _, rule in ipairs(rules) do
				apply_rule(rule, a, action, cell_row, cell_col)
			end
			taken[i] = {action, cell_row, cell_col}
			show_agent(a, player, row ~= a.row or col ~= a.col)
		end
	end
	write_dirty()
	local reached = {}
	for i, a in ipairs(agents) do
		if taken[i] and achieved(a, goals[i], unpack(taken[i])) then
			reached[i] = true
		end
	end
	local t, max_steps = craftium_ma.step_count(), craftium_ma.max_cycles()
	score(reached, 1 - 0.9 * t / max_steps)
end)

-- state(): the grid (height, width, then tile and colour of every cell of the
-- largest grid, rows first) and each agent's row, column, direction and pocket.
craftium_ma.register_state(function()
	local s = {height, width}
	for row = 0, MAX_SIZE - 1 do
		for col = 0, MAX_SIZE - 1 do
			local obj = get(row, col)
			s[#s + 1], s[#s + 2] = obj[1], obj[2]
		end
	end
	return s
end, function(player)
	for _, a in ipairs(agents) do
		if a.name == player:get_player_name() then
			return {a.row, a.col, a.dir, a.pocket[1], a.pocket[2]}
		end
	end
	return {0, 0, 0, 0, 0}
end)

-- Observations beside the frames (task.toml [observations]) ------------------------

local function agent_of(player)
	local name = player:get_player_name()
	for i, a in ipairs(agents) do
		if a.name == name then
			return a, i
		end
	end
end

craftium_ma.register_observation("symbolic", function(player)
	return symbolic(agent_of(player))
end)

craftium_ma.register_observation("goal", function(player)
	local _, i = agent_of(player)
	return goals[i]
end)

craftium_ma.register_observation("direction", function(player)
	return {agent_of(player).dir}
end)

craftium_ma.register_observation("pocket", function(player)
	local pocket = agent_of(player).pocket
	return {pocket[1], pocket[2]}
end)

craftium_ma.register_observation("rules", function()
	local out = {}
	for row = 1, RULE_ROWS do
		for k = 1, 7 do
			out[#out + 1] = rules[row] and rules[row][k] or 0
		end
	end
	return out
end)
