-- The agents' players: placing them, drawing places for them, giving them items.
--
-- deps.agents(): the agent names in order; deps.rng(): the episode's random
-- numbers; deps.checks: checks.lua.

local deps = ...
local players = {}

-- The ObjectRef of a player given by name or ObjectRef; an error blaming the
-- caller of the API function that asked.
local function player_of(player)
	if type(player) == "string" then
		local obj = core.get_player_by_name(player)
		if not obj then
			error("craftium_ma: no player '" .. player .. "' in the game", 3)
		end
		return obj
	end
	return player
end

--- ObjectRefs of the agents, in order.
function players.agent_players()
	local list = {}
	for _, name in ipairs(deps.agents()) do
		list[#list + 1] = player_of(name)
	end
	return list
end

--- Put an agent at pos, looking at yaw (degrees, 0 = +z, 90 = -x) and pitch
--- (degrees, down positive), with full health and breath.
function players.spawn(player, pos, yaw, pitch)
	player = player_of(player)
	deps.checks.position("spawn", pos)
	player:set_pos(pos)
	player:set_look_horizontal(math.rad(yaw or 0))
	player:set_look_vertical(math.rad(pitch or 0))
	player:set_hp(player:get_properties().hp_max)
	player:set_breath(player:get_properties().breath_max)
end

--- Pick a distinct random node position for each agent inside minp..maxp (at
--- minp.y), from the episode's random numbers, none at an x, z of the optional
--- list `avoid` (positions such as a goal's and its neighbours'). Pure Lua
--- (tests/).
function players.random_positions(minp, maxp, count, avoid)
	local rng, taken, out = deps.rng(), {}, {}
	local free = (maxp.x - minp.x + 1) * (maxp.z - minp.z + 1)
	for _, p in ipairs(avoid or {}) do
		local key = p.x .. "," .. p.z
		if not taken[key] and p.x >= minp.x and p.x <= maxp.x and p.z >= minp.z and
				p.z <= maxp.z then
			free = free - 1
		end
		taken[key] = true
	end
	if count > free then
		error("craftium_ma.random_positions: " .. count .. " positions asked for, " .. free ..
			" free", 2)
	end
	while #out < count do
		local p = {x = rng:next(minp.x, maxp.x), y = minp.y, z = rng:next(minp.z, maxp.z)}
		local key = p.x .. "," .. p.z
		if not taken[key] then
			taken[key] = true
			out[#out + 1] = p
		end
	end
	return out
end

--- Replace the agent's main inventory with items (a list of item strings, in
--- hotbar order; the agent wields slot 1 unless it pressed another slot key).
function players.give(player, items)
	player = player_of(player)
	local inv = player:get_inventory()
	inv:set_list("main", {})
	for _, item in ipairs(items or {}) do
		inv:add_item("main", item)
	end
end

return players
