-- speleo: a closed stone cave lit by torches. LEVELS chambers are joined by
-- flights of stairs that switch back and forth: chamber i has its floor at
-- y = -6 i. Every step, every agent gets -y (the deeper, the more). Agents
-- spawn in the top chamber.
-- Option layout = "test": agent_0 at the head of the first flight, facing
-- down it; the other agents by the top chamber's south wall, facing it.

local LEVELS = 4
local MINP = {x = 1, y = -6 * (LEVELS - 1) - 1, z = 1}
local MAXP = {x = 8 * (LEVELS - 1) + 9, y = 5, z = 26}
local cave = {}     -- boxes of air, {minp, maxp}
local torches = {}  -- floor torches

-- A still flame: the client's animation clock is not part of the episode, so
-- an animated texture would make frames differ between runs of one seed.
core.override_item("default:torch",
	{tiles = {"default_torch_on_floor_animated.png^[verticalframe:16:0"}})

local function carve(x1, y1, z1, x2, y2, z2)
	cave[#cave + 1] = {vector.new(x1, y1, z1), vector.new(x2, y2, z2)}
end

local function torch(x, y, z)
	torches[#torches + 1] = {x = x, y = y, z = z}
end

for i = 0, LEVELS - 1 do
	local floor = -6 * i
	-- chambers lie south (z 2..8) and north (z 19..25) by turns
	local z1 = i % 2 == 0 and 2 or 19
	local x1, x2 = math.max(2, 8 * i - 5), 8 * i + 8
	carve(x1, floor + 1, z1, x2, floor + 4, z1 + 6)
	for _, x in ipairs({x1, x2}) do
		torch(x, floor + 1, z1)
		torch(x, floor + 1, z1 + 3)
		torch(x, floor + 1, z1 + 6)
	end
	if i < LEVELS - 1 then
		-- the flight to the next chamber: x 8i+4..8i+6, one node down every two
		for k = 0, 9 do
			local z = i % 2 == 0 and 9 + k or 18 - k
			local y = floor - 1 - math.floor(k / 2)  -- the step's floor
			carve(8 * i + 4, y + 1, z, 8 * i + 6, y + 3, z)
			if k == 3 or k == 7 then
				torch(k == 3 and 8 * i + 4 or 8 * i + 6, y + 1, z)
			end
		end
	end
end

local function build_cave()
	craftium_ma.edit_nodes(MINP, MAXP, function(nodes)
		nodes.fill(MINP, MAXP, "default:stone")
		for _, box in ipairs(cave) do
			nodes.fill(box[1], box[2], "air")
		end
	end)
	for _, pos in ipairs(torches) do
		core.set_node(pos, {name = "default:torch", param2 = 1})  -- on the floor
	end
end

craftium_ma.register_area(MINP, MAXP, build_cave)

craftium_ma.register_state(nil, craftium_ma.agent_state({"x", "y", "z"}))

craftium_ma.register_on_reset(function(seed, options)
	local rng = craftium_ma.rng()
	local players = craftium_ma.agent_players()
	-- the top chamber, away from its torches
	local spots = craftium_ma.random_positions({x = 3, y = 0.5, z = 3}, {x = 7, y = 0.5, z = 7},
		#players)
	for i, player in ipairs(players) do
		if options.layout == "test" then
			if i == 1 then
				craftium_ma.spawn(player, {x = 5, y = 0.5, z = 8}, 0)
			else
				craftium_ma.spawn(player, {x = i, y = 0.5, z = 3}, 180)
			end
		else
			craftium_ma.spawn(player, spots[i], rng:next(0, 359))
		end
	end
end)

craftium_ma.register_on_step(function()
	for _, player in ipairs(craftium_ma.agent_players()) do
		craftium_ma.add_reward(player, -player:get_pos().y)
	end
end)
