-- chop_tree: a fenced forest on a grass floor (y = 0); every agent wields a
-- steel axe and gets +1 for each tree trunk node it digs.
-- Option layout = "test": agent_0 stands in front of the trunk at (11, 11),
-- facing it; the other agents stand at the south hedge, facing it.

local SIZE = 24  -- the forest's inside: x, z in 1 .. SIZE
local TRUNK, LEAVES = "default:tree", "default:leaves"
local HEDGE = "default:bush_leaves"  -- no leaf decay: it stays when trees fall
local MINP, MAXP = {x = -1, y = 0, z = -1}, {x = SIZE + 2, y = 7, z = SIZE + 2}

-- Trunk columns on a staggered grid, 4 nodes apart.
local trunks, is_trunk = {}, {}
for row = 0, 5 do
	for x = 3 + (row % 2) * 2, SIZE - 1, 4 do
		local z = 3 + 4 * row
		trunks[#trunks + 1] = {x = x, z = z}
		is_trunk[x .. "," .. z] = true
	end
end

-- Free floor cells, in a fixed order, to spawn agents on.
local free = {}
for x = 1, SIZE do
	for z = 1, SIZE do
		if not is_trunk[x .. "," .. z] then
			free[#free + 1] = {x = x, z = z}
		end
	end
end

local function build_forest(nodes)
	nodes.fill(MINP, {x = MAXP.x, y = 0, z = MAXP.z}, "default:dirt_with_grass")
	-- a hedge of leaves, two nodes thick, fences the forest in
	for x = MINP.x, MAXP.x do
		for z = MINP.z, MAXP.z do
			if x < 1 or z < 1 or x > SIZE or z > SIZE then
				nodes.fill({x = x, y = 1, z = z}, {x = x, y = 3, z = z}, HEDGE)
			end
		end
	end
	for _, t in ipairs(trunks) do
		-- crown: 5 x 5 minus corners at y = 3, 4; 3 x 3 at y = 5; one leaf on top
		for y = 3, 6 do
			local r = y <= 4 and 2 or (y == 5 and 1 or 0)
			for dx = -r, r do
				for dz = -r, r do
					if r < 2 or math.abs(dx) + math.abs(dz) < 4 then
						nodes.set(t.x + dx, y, t.z + dz, LEAVES)
					end
				end
			end
		end
		nodes.fill({x = t.x, y = 1, z = t.z}, {x = t.x, y = 4, z = t.z}, TRUNK)
	end
end

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.edit_nodes(MINP, MAXP, build_forest)
end)

craftium_ma.register_state(nil, craftium_ma.agent_state({"x", "z", "yaw"}))

craftium_ma.register_on_reset(function(seed, options)
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	local taken = {}
	for i, player in ipairs(craftium_ma.agent_players()) do
		if options.layout == "test" then
			if i == 1 then
				craftium_ma.spawn(player, {x = 11, y = 0.5, z = 10}, 0)
			else
				craftium_ma.spawn(player, {x = 2 * i, y = 0.5, z = 1}, 180)
			end
		else
			local k
			repeat
				k = rng:next(1, #free)
			until not taken[k]
			taken[k] = true
			craftium_ma.spawn(player, {x = free[k].x, y = 0.5, z = free[k].z}, rng:next(0, 359))
		end
		craftium_ma.give(player, {"default:axe_steel"})
	end
end)

core.register_on_dignode(function(pos, oldnode, digger)
	if oldnode.name == TRUNK and craftium_ma.is_agent(digger) then
		craftium_ma.add_reward(digger, 1)
	end
end)
