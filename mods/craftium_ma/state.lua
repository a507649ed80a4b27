-- The global state vector (env.state()): set by the task directly, or computed
-- from its functions after every reset and env step. Pure Lua (tests/).
--
-- deps.agent_players(): the agents' ObjectRefs, in order.

local deps = ...
local state = {}

local vector = {}   -- the current state vector, a flat array of numbers
local parts = nil   -- {shared, per_agent}, see state.register_state

--- The global state vector returned by env.state() (a flat array of numbers).
function state.set_state(values)
	if type(values) ~= "table" then
		error("craftium_ma.set_state: the state must be a flat array of numbers, got " ..
			type(values), 2)
	end
	vector = values
end

local function check_part(what, fn)
	if fn ~= nil and type(fn) ~= "function" then
		error("craftium_ma.register_state: " .. what .. " must be a function or nil, got " ..
			type(fn), 3)
	end
end

--- The global state vector: shared() followed, for each agent in order, by
--- per_agent(player); both return flat arrays of numbers and either may be nil.
--- It is computed after every reset and every env step (after the step
--- callbacks), so a task need not call set_state.
function state.register_state(shared, per_agent)
	check_part("shared", shared)
	check_part("per_agent", per_agent)
	parts = {shared = shared, per_agent = per_agent}
end

local function append(list, values)
	for _, v in ipairs(values) do
		list[#list + 1] = v
	end
end

--- Compute the vector from the registered functions (if any).
function state.compute()
	if not parts then
		return
	end
	local s = {}
	append(s, parts.shared and parts.shared() or {})
	if parts.per_agent then
		for _, player in ipairs(deps.agent_players()) do
			append(s, parts.per_agent(player))
		end
	end
	vector = s
end

--- The state vector as one string, its numbers separated by spaces (each with
--- Lua's 14 significant digits, more than env.state()'s float32 holds): far
--- cheaper for the server to send than a JSON array (xland's has 1,300 numbers).
function state.packed()
	for i, v in ipairs(vector) do
		if type(v) ~= "number" then
			error("craftium_ma: the state vector must hold only numbers, its value " .. i ..
				" is a " .. type(v), 0)
		end
	end
	return table.concat(vector, " ")
end

-- What an agent's part of the state may hold: its position, look and health.
local READ = {
	x = function(_, pos) return pos.x end,
	y = function(_, pos) return pos.y end,
	z = function(_, pos) return pos.z end,
	yaw = function(player) return player:get_look_horizontal() end,
	pitch = function(player) return player:get_look_vertical() end,
	hp = function(player) return player:get_hp() end,
}
local FIELDS = "x, y, z, yaw, pitch, hp"

--- A per_agent function for register_state: the player's values named in
--- `fields`, in that order: "x", "y", "z" (its position), "yaw", "pitch" (its
--- look, radians), "hp".
function state.agent_state(fields)
	if type(fields) ~= "table" or #fields == 0 then
		error("craftium_ma.agent_state: give a list of fields (" .. FIELDS .. "), got " ..
			type(fields), 2)
	end
	local reads = {}
	for i, field in ipairs(fields) do
		reads[i] = READ[field]
		if not reads[i] then
			error("craftium_ma.agent_state: unknown field '" .. tostring(field) .. "'; the fields are " ..
				FIELDS, 2)
		end
	end
	return function(player)
		local pos, values = player:get_pos(), {}
		for i, read in ipairs(reads) do
			values[i] = read(player, pos)
		end
		return values
	end
end

return state
