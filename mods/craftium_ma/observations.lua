-- The observations a task declares beside the frames (task.toml [observations]):
-- a function per name gives an agent's value; the bridge calls it for every agent
-- after every reset and every env step, for the names the env observes. Pure Lua
-- (tests/).
--
-- deps.declared: the names the manifest declares; deps.observed: those the env
-- observes (parallel_env's observations=, but "rgb"); deps.agent_players(): the
-- agents' ObjectRefs, in order; deps.checks: checks.lua.

local deps = ...
local observations = {}

local functions = {}  -- name -> fn(player)
local current = {}    -- agent name -> {name = value}

local function declared(name)
	for _, known in ipairs(deps.declared) do
		if known == name then
			return true
		end
	end
	return false
end

--- fn(player) gives the agent's observation `name`: a number, a boolean or a flat
--- array of them, as many as the manifest's shape holds (row-major).
function observations.register_observation(name, fn)
	if type(name) ~= "string" then
		error("craftium_ma.register_observation: the name must be a string, got " .. type(name), 2)
	end
	if not declared(name) then
		local names = table.concat(deps.declared, ", ")
		error("craftium_ma.register_observation: the manifest declares no observation '" ..
			name .. "'; it declares " .. (names ~= "" and names or "none") ..
			" ([observations] in task.toml)", 2)
	end
	deps.checks.callback("register_observation", fn)
	functions[name] = fn
end

local function is_scalar(value)
	return type(value) == "number" or type(value) == "boolean"
end

-- What is wrong with a value that is not a number, a boolean or a flat array of them.
local function wrong(value)
	if is_scalar(value) then
		return nil
	end
	if type(value) ~= "table" then
		return "got " .. type(value)
	end
	local count = 0
	for k, v in pairs(value) do
		if type(k) ~= "number" or not is_scalar(v) then
			return "got a table with the " .. type(k) .. " key " .. tostring(k) .. " holding a " ..
				type(v)
		end
		count = count + 1
	end
	if count ~= #value then
		return "got a table with holes"
	end
	return nil
end

-- fn(player); where it fails, an error naming the observation and the agent (and, for
-- a wrong value, the line that defines fn).
local function value_of(fn, player, name, agent)
	local where = " (observation '" .. name .. "' of " .. agent .. ")"
	local ok, value = pcall(fn, player)
	if not ok then
		error(tostring(value) .. where, 0)
	end
	local problem = wrong(value)
	if problem then
		deps.checks.returned(fn, "an observation must be a number, a boolean or a flat array " ..
			"of them, " .. problem .. where)
	end
	return value
end

--- Every agent's values of the observed names, from the registered functions.
function observations.compute()
	if #deps.observed == 0 then
		return
	end
	current = {}
	for _, player in ipairs(deps.agent_players()) do
		local agent, values = player:get_player_name(), {}
		for _, name in ipairs(deps.observed) do
			if functions[name] then
				values[name] = value_of(functions[name], player, name, agent)
			end
		end
		current[agent] = values
	end
end

--- Each agent's values by name; nil where the env observes none of the declared names.
function observations.current()
	return #deps.observed > 0 and current or nil
end

return observations
