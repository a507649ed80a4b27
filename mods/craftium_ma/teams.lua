-- Teams of agents and the env's humans: who is in which, and team rewards.
-- Pure Lua given its deps (tests/).
--
-- deps.agents(), deps.is_agent(name), deps.add_reward(name, r): results.lua's;
-- deps.is_human(name), deps.add_human_reward(name, r): humans.lua's;
-- deps.checks: checks.lua; deps.declared: the manifest's teams (a list of names).

local deps = ...
local teams = {}

local members, team_of = {}, {}  -- team -> list of names; name -> team

--- new_teams = {red = {"agent_0", "agent_2", "alice"}, blue = {...}}; replaces
--- earlier teams. Members are agents or the env's humans.
function teams.set_teams(new_teams)
	members, team_of = {}, {}
	for team, names in pairs(new_teams) do
		members[team] = table.copy(names)
		for _, name in ipairs(names) do
			if not deps.is_agent(name) and not deps.is_human(name) then
				error("craftium_ma.set_teams: '" .. tostring(name) .. "' is neither an " ..
					"agent nor a human of the env", 2)
			end
			team_of[name] = team
		end
	end
end

--- The teams the task's manifest declares (teams = [...] in task.toml), in order.
function teams.task_teams()
	return table.copy(deps.declared or {})
end

--- Split the agents into teams by turns: agent_0 to the first name, agent_1 to
--- the second, ... (names in the order given; by default the manifest's teams,
--- the split Python's env.team_of expects).
function teams.split_teams(names)
	names = names or deps.declared
	local split = {}
	for _, team in ipairs(names) do
		split[team] = {}
	end
	for i, agent in ipairs(deps.agents()) do
		local team = names[(i - 1) % #names + 1]
		table.insert(split[team], agent)
	end
	teams.set_teams(split)
end

--- The team of a player (ObjectRef or name), or nil.
function teams.team_of(player)
	return team_of[deps.checks.player_name(player)]
end

--- The members of a team (an empty list for an unknown team).
function teams.team_members(team)
	return table.copy(members[team] or {})
end

--- Every member of the team gets reward r this step (a human: to its score).
function teams.add_team_reward(team, r)
	if not members[team] then
		error("craftium_ma.add_team_reward: unknown team '" .. tostring(team) .. "'", 2)
	end
	if type(r) ~= "number" then
		error("craftium_ma.add_team_reward: the reward must be a number, got " .. type(r), 2)
	end
	for _, name in ipairs(members[team]) do
		if deps.is_human(name) then
			deps.add_human_reward(name, r)
		else
			deps.add_reward(name, r)
		end
	end
end

return teams
