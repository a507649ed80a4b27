-- Potential-based reward shaping: each step pays every agent the change of a
-- potential of the world's state, so an episode's shaping sums to its last
-- potential less its first and cannot be farmed (Ng et al., 1999, with no
-- discount). A potential is one for all agents, or each agent's own (e.g. its
-- team's progress). Pure Lua (tests/).
--
-- deps.agents: the agent names in order; deps.add_reward: results.add_reward;
-- deps.checks: checks.lua.

local deps = ...
local shaping = {}

local potentials = {}  -- {fn, last}: last is nil in an episode the potential does not shape

--- fn() returns the potential of the state: a number (every agent's), a table
--- of a number per agent name (each agent's own), or nil: no shaping this
--- episode (e.g. a task option turns it off); it is asked once per reset.
function shaping.register_shaping(fn)
	deps.checks.callback("register_shaping", fn)
	potentials[#potentials + 1] = {fn = fn}
end

local function is_number(value)
	return type(value) == "number" and value == value
end

-- fn's value as a table of each agent's potential, or nil; any other value is
-- an error blaming the line that defines fn.
local function value_of(fn)
	local value = fn()
	if value == nil then
		return nil
	end
	local each = {}
	for _, name in ipairs(deps.agents()) do
		local own = value
		if type(value) == "table" then
			own = value[name]
		end
		if not is_number(own) then
			local got = own ~= own and "nan" or type(own)
			deps.checks.returned(fn, "a potential must be a number, a table of a number per agent, " ..
				"or nil; got " .. (type(value) == "table" and got .. " for " .. name or got))
		end
		each[name] = own
	end
	return each
end

--- After the reset hooks: each potential's first value.
function shaping.begin()
	for _, potential in ipairs(potentials) do
		potential.last = value_of(potential.fn)
	end
end

--- Before the step hooks: every agent is paid the change of its potential.
function shaping.pay()
	for _, potential in ipairs(potentials) do
		if potential.last then
			local now = value_of(potential.fn)
			for _, name in ipairs(deps.agents()) do
				deps.add_reward(name, now[name] - potential.last[name])
			end
			potential.last = now
		end
	end
end

return shaping
