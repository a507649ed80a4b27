-- commons_harvest: agents collect apples in a fenced meadow, +1 per apple.
-- Every step an empty apple spot regrows with probability
-- regrow_rate * (apples within radius 2 in its patch), so a patch that is
-- harvested bare never comes back. Options: regrow_rate, layout ("default"
-- or "test": a fixed layout for the scripted tests).

-- The meadow lies inside one map block (nodes 0..15): the block at every
-- agent's feet, which a reset waits for, so every frame shows all of it.
local LO, HI = 1, 14  -- the fence; the meadow inside is x, z in 2 .. 13, floor at y = 0
local RADIUS = 2      -- patch shape (|dx| + |dz| <= 2) and regrowth neighbourhood
local CENTRES = {{4, 4}, {11, 4}, {4, 11}, {11, 11}}  -- of the patches
local PITCH = 30      -- agents look down at the ground just ahead
local APPLE = "commons_harvest:apple"

-- The floor and the fence cannot be dug nor pointed at: only apples are.
core.register_node("commons_harvest:grass", {
	description = "Meadow",
	tiles = {"default_grass.png", "default_dirt.png", "default_dirt.png^default_grass_side.png"},
	pointable = false,
	is_ground_content = false,
	groups = {not_in_creative_inventory = 1},
})

core.register_node("commons_harvest:fence", {
	description = "Meadow fence",
	drawtype = "fencelike",
	tiles = {"default_fence_wood.png"},
	pointable = false,
	paramtype = "light",
	sunlight_propagates = true,
	is_ground_content = false,
	groups = {not_in_creative_inventory = 1},
})

core.register_node(APPLE, {
	description = "Apple",
	drawtype = "plantlike",
	tiles = {"default_apple.png"},
	paramtype = "light",
	sunlight_propagates = true,
	walkable = false,
	is_ground_content = false,
	selection_box = {type = "fixed", fixed = {-0.35, -0.5, -0.35, 0.35, 0.3, 0.35}},
	groups = {dig_immediate = 3, not_in_creative_inventory = 1},
	drop = "",
})

local MINP, MAXP = {x = LO, y = 0, z = LO}, {x = HI, y = 4, z = HI}

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, floor = "commons_harvest:grass",
		wall = "commons_harvest:fence", wall_height = 2})
end)

local spots = {}     -- {pos, patch, near = indices of the spots within RADIUS in its patch}
local index_of = {}  -- "x,z" -> spot index
local apple = {}     -- apple[i]: spot i holds an apple
local harvest = {}   -- agent name -> apples taken this episode
local taken, taken_steps = 0, 0  -- apples taken, and the sum of the steps they were taken at
local ended = false

local function add_spot(patch, x, z)
	spots[#spots + 1] = {pos = {x = x, y = 1, z = z}, patch = patch}
	index_of[x .. "," .. z] = #spots
end

local function add_diamond(patch, cx, cz)
	for dx = -RADIUS, RADIUS do
		for dz = -RADIUS, RADIUS do
			if math.abs(dx) + math.abs(dz) <= RADIUS then
				add_spot(patch, cx + dx, cz + dz)
			end
		end
	end
end

local function link_neighbours()
	for _, s in ipairs(spots) do
		s.near = {}
		for j, t in ipairs(spots) do
			local d2 = (s.pos.x - t.pos.x) ^ 2 + (s.pos.z - t.pos.z) ^ 2
			if t ~= s and t.patch == s.patch and d2 <= RADIUS * RADIUS then
				s.near[#s.near + 1] = j
			end
		end
	end
end

-- Test layout: patch 1 is one apple two nodes in front of agent_0, patch 2 a
-- row of three whose middle is two nodes in front of agent_1, patches 3 and 4
-- are the usual diamonds; agents 2.. stand in the middle looking at bare ground.
local function test_layout()
	add_spot(1, 3, 5)
	for x = 9, 11 do
		add_spot(2, x, 5)
	end
	add_diamond(3, 4, 11)
	add_diamond(4, 11, 11)
	local places = {{x = 3, z = 3, yaw = 0}, {x = 10, z = 3, yaw = 0}}
	for i = 3, #craftium_ma.agents() do
		places[i] = {x = 7 + (i - 3) % 2, z = 7 + math.floor((i - 3) / 2) * 2, yaw = 0}
	end
	return places
end

local function default_layout(rng)
	for p, c in ipairs(CENTRES) do
		add_diamond(p, c[1], c[2])
	end
	local places, used = {}, {}
	while #places < #craftium_ma.agents() do
		local x, z = rng:next(LO + 1, HI - 1), rng:next(LO + 1, HI - 1)
		local key = x .. "," .. z
		if not index_of[key] and not used[key] then
			used[key] = true
			places[#places + 1] = {x = x, z = z, yaw = rng:next(0, 359)}
		end
	end
	return places
end

local function apples_left_per_patch()
	local s = {}
	for p = 1, #CENTRES do
		s[p] = 0
	end
	for i, spot in ipairs(spots) do
		if apple[i] then
			s[spot.patch] = s[spot.patch] + 1
		end
	end
	return s
end
craftium_ma.register_state(apples_left_per_patch, craftium_ma.agent_state({"x", "z"}))
craftium_ma.register_observation("apples",
	function(player) return harvest[player:get_player_name()] end)
local apple_map = nil  -- the apple_map observation, until an apple is taken or grows
craftium_ma.register_observation("apple_map", function()
	if not apple_map then
		apple_map = {}
		for i = 1, 16 * 16 do
			apple_map[i] = 0
		end
		for i, spot in ipairs(spots) do
			if apple[i] then
				apple_map[spot.pos.z * 16 + spot.pos.x + 1] = 1
			end
		end
	end
	return apple_map
end)

craftium_ma.register_on_reset(function(seed, options)
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	spots, index_of, apple, harvest = {}, {}, {}, {}
	taken, taken_steps, ended, apple_map = 0, 0, false, nil
	local places = options.layout == "test" and test_layout() or default_layout(rng)
	link_neighbours()
	for i, spot in ipairs(spots) do
		apple[i] = true
		core.set_node(spot.pos, {name = APPLE})
	end
	for i, player in ipairs(craftium_ma.agent_players()) do
		local p = places[i]
		craftium_ma.spawn(player, {x = p.x, y = 0.5, z = p.z}, p.yaw, PITCH)
		harvest[player:get_player_name()] = 0
	end
end)

core.register_on_dignode(function(pos, oldnode, digger)
	local i = index_of[pos.x .. "," .. pos.z]
	if oldnode.name ~= APPLE or not i or not craftium_ma.is_agent(digger) then
		return
	end
	local name = digger:get_player_name()
	apple[i] = false
	apple_map = nil
	harvest[name] = harvest[name] + 1
	-- digs arrive during the server's tick, before the bridge counts the step
	taken, taken_steps = taken + 1, taken_steps + craftium_ma.step_count() + 1
	craftium_ma.add_reward(name, 1)
end)

local function regrow(rate)
	local rng, grow = craftium_ma.rng(), {}
	for i, spot in ipairs(spots) do
		if not apple[i] then
			local near = 0
			for _, j in ipairs(spot.near) do
				near = near + (apple[j] and 1 or 0)
			end
			if near > 0 and rng:next(1, 1000000) <= rate * near * 1000000 then
				grow[#grow + 1] = i
			end
		end
	end
	for _, i in ipairs(grow) do
		apple[i] = true
		apple_map = nil
		core.set_node(spots[i].pos, {name = APPLE})
	end
end

-- Episode metrics: sustainability = mean step at which apples were taken (0 if
-- none), equality = 1 - Gini coefficient of the harvests, efficiency = apples
-- per agent.
local function set_metrics(apples_left)
	local names, total, diff = craftium_ma.agents(), 0, 0
	for _, a in ipairs(names) do
		total = total + harvest[a]
		for _, b in ipairs(names) do
			diff = diff + math.abs(harvest[a] - harvest[b])
		end
	end
	local gini = total > 0 and diff / (2 * #names * total) or 0
	for _, name in ipairs(names) do
		craftium_ma.set_info(name, "sustainability", taken > 0 and taken_steps / taken or 0)
		craftium_ma.set_info(name, "equality", 1 - gini)
		craftium_ma.set_info(name, "efficiency", total / #names)
		craftium_ma.set_info(name, "apples_left", apples_left)
	end
end

craftium_ma.register_on_step(function()
	if ended then
		return
	end
	regrow(tonumber(craftium_ma.options().regrow_rate) or 0)
	local left = 0
	for i = 1, #spots do
		left = left + (apple[i] and 1 or 0)
	end
	for _, name in ipairs(craftium_ma.agents()) do
		craftium_ma.set_info(name, "apples", harvest[name])
	end
	-- with no apple left nothing can regrow: the episode is over
	if left == 0 then
		craftium_ma.end_episode()
	end
	if left == 0 or craftium_ma.step_count() == craftium_ma.max_cycles() then
		ended = true
		set_metrics(left)
	end
end)
