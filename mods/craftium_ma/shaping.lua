-- Potential-based reward shaping: each step pays every agent the change of a
-- potential of the world's state, so an episode's shaping sums to its last
-- potential less its first and cannot be farmed (Ng et al., 1999, with no
-- discount). Pure Lua (tests/).
--
-- deps.agents: the agent names in order; deps.add_reward: results.add_reward;
-- deps.checks: checks.lua.

local deps = ...
local shaping = {}

local potentials = {}  -- {fn, last}: last is nil in an episode the potential does not shape

--- fn() returns the potential of the state, a number, or nil: no shaping this
--- episode (e.g. a task option turns it off); it is asked once per reset.
function shaping.register_shaping(fn)
	deps.checks.callback("register_shaping", fn)
	potentials[#potentials + 1] = {fn = fn}
end

-- fn's value; a value that is neither a number nor nil is an error blaming the
-- line that defines fn.
local function value_of(fn)
	local value = fn()
	if value ~= nil and (type(value) ~= "number" or value ~= value) then
		deps.checks.returned(fn, "a potential must be a number or nil, got " ..
			(value ~= value and "nan" or type(value)))
	end
	return value
end

--- After the reset hooks: each potential's first value.
function shaping.begin()
	for _, potential in ipairs(potentials) do
		potential.last = value_of(potential.fn)
	end
end

--- Before the step hooks: every agent is paid each potential's change.
function shaping.pay()
	for _, potential in ipairs(potentials) do
		if potential.last then
			local now = value_of(potential.fn)
			for _, name in ipairs(deps.agents()) do
				deps.add_reward(name, now - potential.last)
			end
			potential.last = now
		end
	end
end

return shaping
