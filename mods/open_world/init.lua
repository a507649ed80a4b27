-- open_world: agents in Luanti's generated terrain (mapgen v7 with minetest_game,
-- the world template worlds/open_world fixes the map seed), confined to a square
-- around the origin by an invisible wall. Every agent wields a tool that digs
-- like a steel axe, pickaxe and shovel; digging a tree trunk node (wood) or a
-- stone node gives +1 to the agent that dug it. The bridge restores the square
-- at every reset; nothing outside it can be dug, so every episode starts clean.
-- Option layout = "test": agent_0 stands in front of a trunk, facing it;
-- agent_1 stands on the spot with the shallowest stone, looking straight down.

local R = 20  -- the square: x, z in -R .. R
local MINP, MAXP = {x = -R, y = -8, z = -R}, {x = R, y = 31, z = R}
local WALL_MINP, WALL_MAXP = vector.offset(MINP, -1, 0, -1), vector.offset(MAXP, 1, 0, 1)
local WALL = "open_world:wall"
local TOOL = "open_world:pick_axe"

core.register_node(WALL, {
	description = "Invisible wall",
	drawtype = "airlike",
	paramtype = "light",
	sunlight_propagates = true,
	walkable = true,
	pointable = false,
	diggable = false,
	floodable = false,
	drop = "",
	groups = {not_in_creative_inventory = 1},
})

local function caps(t1, t2, t3)
	return {times = {[1] = t1, [2] = t2, [3] = t3}, uses = 0, maxlevel = 2}
end

core.register_tool(TOOL, {
	description = "Pick-axe (digs like steel axe, pickaxe and shovel; never wears)",
	inventory_image = "default_tool_steelpick.png",
	tool_capabilities = {
		full_punch_interval = 1.0,
		max_drop_level = 1,
		groupcaps = {
			cracky = caps(4.00, 1.60, 0.80),  -- default:pick_steel
			choppy = caps(2.50, 1.40, 1.00),  -- default:axe_steel
			crumbly = caps(1.50, 0.90, 0.40), -- default:shovel_steel
			snappy = caps(2.50, 1.20, 0.35),  -- default:sword_steel
		},
		damage_groups = {fleshy = 1},
	},
})

local function inside(pos)
	return pos.x >= MINP.x and pos.x <= MAXP.x and pos.y >= MINP.y and pos.y <= MAXP.y
		and pos.z >= MINP.z and pos.z <= MAXP.z
end

-- Outside the square nothing can be dug or placed: the bridge restores only the square.
local is_protected = core.is_protected
function core.is_protected(pos, name)
	return not inside(pos) or is_protected(pos, name)
end

-- Luanti draws a schematic's per-node probabilities (the gaps in a tree's crown, its
-- apples) from a process-wide random generator seeded by the clock, so the same seed grew
-- different trees in every server. Every node of a decoration schematic becomes certain:
-- placed if its probability was at least one half, else never.
local function certain(schematic)
	local s = type(schematic) == "table" and table.copy(schematic)
		or core.read_schematic(schematic, {write_yslice_prob = "all"})
	for _, node in ipairs(s.data) do
		node.prob = (node.prob or 255) >= 128 and 255 or 0
	end
	for _, slice in ipairs(s.yslice_prob or {}) do
		slice.prob = 255
	end
	return s
end

core.register_on_mods_loaded(function()
	local decorations = {}  -- in registration order: a later decoration yields to an earlier one
	for key, def in pairs(core.registered_decorations) do
		local id = type(key) == "number" and key or core.get_decoration_id(key)
		decorations[#decorations + 1] = {id = id, def = def}
	end
	table.sort(decorations, function(a, b) return a.id < b.id end)
	core.clear_registered_decorations()
	for _, d in ipairs(decorations) do
		local def = table.copy(d.def)
		if def.deco_type == "schematic" then
			def.schematic = certain(def.schematic)
		end
		core.register_decoration(def)
	end
end)

local function is_wood(name)
	return core.get_item_group(name, "tree") > 0
end

-- The world changes only by what the agents do: minetest_game's leaf decay and apple
-- regrowth run on timers of random length (ABMs are off: abm_interval in task.toml).
core.register_on_mods_loaded(function()
	for name in pairs(core.registered_nodes) do
		if is_wood(name) then
			core.override_item(name, {after_destruct = function() end})
		end
	end
	core.override_item("default:apple", {after_dig_node = function() end})
end)

local function is_stone(name)
	return core.get_item_group(name, "stone") > 0
end

-- Ground: a walkable node that is not part of a tree.
local function is_ground(name)
	local def = core.registered_nodes[name]
	return def and def.walkable and not is_wood(name) and core.get_item_group(name, "leaves") == 0
end

local function is_free(name)
	local def = core.registered_nodes[name]
	return def and not def.walkable and def.liquidtype == "none"
end

-- Filled in once the terrain is generated, in a fixed order (x, then z).
local cells = {}  -- {x, y, z}: ground at y with two free nodes above, inside the wall
local trunk_test, stone_test  -- indices into cells, for layout = "test"

local function survey(nodes)
	for x = -R + 1, R - 1 do
		for z = -R + 1, R - 1 do
			for y = MAXP.y - 2, MINP.y, -1 do
				if is_ground(nodes.get(x, y, z)) then
					if is_free(nodes.get(x, y + 1, z)) and is_free(nodes.get(x, y + 2, z)) then
						local depth = 0  -- nodes to dig through down to stone
						while y - depth > MINP.y and not is_stone(nodes.get(x, y - depth, z)) do
							depth = depth + 1
						end
						cells[#cells + 1] = {x = x, y = y, z = z, depth = depth}
						-- a trunk right in front (+z) of the cell, up to eye height
						if not trunk_test and is_wood(nodes.get(x, y + 1, z + 1)) and
								is_wood(nodes.get(x, y + 2, z + 1)) then
							trunk_test = #cells
						end
						if not stone_test or depth < cells[stone_test].depth then
							stone_test = #cells
						end
					end
					break
				end
			end
		end
	end
	-- an invisible wall around the square, through everything that is not walkable
	for x = -R - 1, R + 1 do
		for z = -R - 1, R + 1 do
			if math.abs(x) == R + 1 or math.abs(z) == R + 1 then
				for y = MINP.y, MAXP.y do
					if not core.registered_nodes[nodes.get(x, y, z)].walkable then
						nodes.set(x, y, z, WALL)
					end
				end
			end
		end
	end
end

-- The terrain keeps the light the map generator gave it (the wall is airlike).
craftium_ma.register_area(WALL_MINP, WALL_MAXP, function()
	craftium_ma.edit_nodes(WALL_MINP, WALL_MAXP, survey, false)
end)

craftium_ma.register_state(nil, craftium_ma.agent_state({"x", "y", "z", "yaw"}))

local collected = {}  -- per agent: {wood = n, stone = n}, reported in infos every step

local function report_collected()
	for name, counts in pairs(collected) do
		craftium_ma.set_info(name, "wood", counts.wood)
		craftium_ma.set_info(name, "stone", counts.stone)
	end
end

craftium_ma.register_on_reset(function(seed, options)
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	local taken = {}
	if options.layout == "test" then
		taken[trunk_test], taken[stone_test] = true, true
	end
	for i, player in ipairs(craftium_ma.agent_players()) do
		local k, yaw, pitch
		if options.layout == "test" and i <= 2 then
			k, yaw, pitch = i == 1 and trunk_test or stone_test, 0, i == 1 and 0 or 90
		else
			repeat
				k = rng:next(1, #cells)
			until not taken[k]
			yaw, pitch = rng:next(0, 359), 0
		end
		taken[k] = true
		craftium_ma.spawn(player, {x = cells[k].x, y = cells[k].y + 0.5, z = cells[k].z}, yaw, pitch)
		craftium_ma.give(player, {TOOL})
		player:set_sky({type = "plain", base_color = "#8cbafa", clouds = false})
		collected[player:get_player_name()] = {wood = 0, stone = 0}
	end
	report_collected()
end)

craftium_ma.register_on_step(report_collected)

core.register_on_dignode(function(pos, oldnode, digger)
	if not craftium_ma.is_agent(digger) then
		return
	end
	local kind = is_wood(oldnode.name) and "wood" or (is_stone(oldnode.name) and "stone")
	if kind then
		local counts = collected[digger:get_player_name()]
		counts[kind] = counts[kind] + 1
		craftium_ma.add_reward(digger, 1)
	end
end)
