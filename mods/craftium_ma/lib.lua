-- Helpers for what every task needs: placing agents, giving items, teams.
-- Loaded by init.lua; all functions live in the craftium_ma table.

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
function craftium_ma.agent_players()
	local players = {}
	for _, name in ipairs(craftium_ma.agents()) do
		players[#players + 1] = player_of(name)
	end
	return players
end

--- Put an agent at pos, looking at yaw (degrees, 0 = +z, 90 = -x) and pitch
--- (degrees, down positive), with full health and breath.
function craftium_ma.spawn(player, pos, yaw, pitch)
	player = player_of(player)
	if type(pos) ~= "table" or type(pos.x) ~= "number" or type(pos.y) ~= "number" or
			type(pos.z) ~= "number" then
		error("craftium_ma.spawn: pos must be a position {x = ..., y = ..., z = ...}, got " ..
			(type(pos) == "table" and "a table without numbers x, y, z" or type(pos)), 2)
	end
	player:set_pos(pos)
	player:set_look_horizontal(math.rad(yaw or 0))
	player:set_look_vertical(math.rad(pitch or 0))
	player:set_hp(player:get_properties().hp_max)
	player:set_breath(player:get_properties().breath_max)
end

--- Pick a distinct random node position for each agent inside minp..maxp (at
--- minp.y), from the episode's random numbers, none at an x, z of the optional
--- list `avoid` (positions such as a goal's and its neighbours').
function craftium_ma.random_positions(minp, maxp, count, avoid)
	local rng, taken, out = craftium_ma.rng(), {}, {}
	local free = (maxp.x - minp.x + 1) * (maxp.z - minp.z + 1)
	for _, p in ipairs(avoid or {}) do
		local key = p.x .. "," .. p.z
		if not taken[key] and p.x >= minp.x and p.x <= maxp.x and p.z >= minp.z and p.z <= maxp.z then
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
function craftium_ma.give(player, items)
	player = player_of(player)
	local inv = player:get_inventory()
	inv:set_list("main", {})
	for _, item in ipairs(items or {}) do
		inv:add_item("main", item)
	end
end

-- Teams: name -> list of player names (agents, and humans of the env)
local teams, team_of = {}, {}

--- teams = {red = {"agent_0", "agent_2", "alice"}, blue = {...}}; replaces earlier
--- teams. Members are agents or the env's humans.
function craftium_ma.set_teams(new_teams)
	teams, team_of = {}, {}
	for team, members in pairs(new_teams) do
		teams[team] = table.copy(members)
		for _, name in ipairs(members) do
			if not craftium_ma.is_agent(name) and not craftium_ma.is_human(name) then
				error("craftium_ma.set_teams: '" .. tostring(name) .. "' is neither an " ..
					"agent nor a human of the env", 2)
			end
			team_of[name] = team
		end
	end
end

--- Split the agents into teams by turns: agent_0 to the first name, agent_1 to
--- the second, ... (names in the order given).
function craftium_ma.split_teams(names)
	local split = {}
	for _, team in ipairs(names) do
		split[team] = {}
	end
	for i, agent in ipairs(craftium_ma.agents()) do
		local team = names[(i - 1) % #names + 1]
		table.insert(split[team], agent)
	end
	craftium_ma.set_teams(split)
end

--- The team of a player (ObjectRef or name), or nil.
function craftium_ma.team_of(player)
	local name = type(player) == "string" and player or player:get_player_name()
	return team_of[name]
end

--- The members of a team (an empty list for an unknown team).
function craftium_ma.team_members(team)
	return table.copy(teams[team] or {})
end

--- Every member of the team gets reward r this step (a human: to its score).
function craftium_ma.add_team_reward(team, r)
	if not teams[team] then
		error("craftium_ma.add_team_reward: unknown team '" .. tostring(team) .. "'", 2)
	end
	if type(r) ~= "number" then
		error("craftium_ma.add_team_reward: the reward must be a number, got " .. type(r), 2)
	end
	for _, name in ipairs(teams[team]) do
		if craftium_ma.is_human(name) then
			craftium_ma.add_human_reward(name, r)
		else
			craftium_ma.add_reward(name, r)
		end
	end
end
