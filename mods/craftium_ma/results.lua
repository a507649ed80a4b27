-- Each agent's results of the step: reward, termination, truncation, infos.
-- Rewards accumulate within a step; the hooks take the results once a step and
-- start afresh. Pure Lua (tests/).
--
-- deps.agents: the agent names in order; deps.checks: checks.lua.

local deps = ...
local agents, checks = deps.agents, deps.checks
local results = {}

local current  -- name -> {reward, terminated, truncated, info}

local function clear()
	current = {}
	for _, name in ipairs(agents) do
		current[name] = {reward = 0, terminated = false, truncated = false, info = {}}
	end
end
clear()

-- The results of the agent `player` names; an error blaming the caller of the
-- API function that asked.
local function result_of(player)
	local name = checks.player_name(player)
	local result = name and current[name]
	if not result then
		error("craftium_ma: unknown agent '" .. tostring(name or player) .. "'; the agents are " ..
			table.concat(agents, ", "), 3)
	end
	return result
end

--- The step's results of every agent, by name; the next step starts afresh.
function results.take()
	local taken = current
	clear()
	return taken
end

--- Agent names, in order (agent_0, agent_1, ...).
function results.agents()
	return table.copy(agents)
end

--- Whether player (ObjectRef or name) is one of the agents.
function results.is_agent(player)
	local name = checks.player_name(player)
	return name ~= nil and current[name] ~= nil
end

function results.set_reward(player, reward)
	local result = result_of(player)
	checks.reward("set_reward", reward)
	result.reward = reward
end

function results.add_reward(player, reward)
	local result = result_of(player)
	checks.reward("add_reward", reward)
	result.reward = result.reward + reward
end

--- The agent's episode ends this step (Python removes it from env.agents).
function results.set_termination(player)
	result_of(player).terminated = true
end

function results.set_truncation(player)
	result_of(player).truncated = true
end

--- Every agent terminates this step.
function results.end_episode()
	for _, name in ipairs(agents) do
		current[name].terminated = true
	end
end

--- infos[agent][key] = value: a number, string, boolean or flat array of numbers.
function results.set_info(player, key, value)
	local result = result_of(player)
	checks.info(key, value)
	result.info[key] = value
end

return results
