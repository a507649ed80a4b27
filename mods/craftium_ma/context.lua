-- The episode's context: its seed, task options, random numbers, step count and
-- length, set by every reset. Pure Lua given deps.new_rng (tests/).
--
-- deps.new_rng(seed): a new random number generator (PcgRandom in the server).

local deps = ...
local context = {}

local started = false  -- a reset has run: options, seed and rng are the episode's
local seed, options, max_cycles = 0, {}, nil
local rng = deps.new_rng(0)
local steps = 0  -- env steps since the reset

--- Start the episode of a reset request {seed, options, max_cycles}.
function context.begin(request)
	started = true
	seed = request.seed or 0
	options = request.options or {}
	max_cycles = request.max_cycles
	steps = 0
	rng = deps.new_rng(seed)
end

function context.count_step()
	steps = steps + 1
end

--- The options that Python passed (task_options), as a table; known from the
--- first reset on, so not at load time.
function context.options()
	if not started then
		error("craftium_ma.options() at load time: the options are known from the first " ..
			"reset on; call it in a register_on_reset or register_on_step function", 2)
	end
	return options
end

--- The seed of the current episode.
function context.seed()
	return seed
end

--- The episode's random numbers, seeded from reset(seed=...): draw all randomness from them.
function context.rng()
	return rng
end

--- Env steps since the reset.
function context.step_count()
	return steps
end

--- The episode's max_cycles (nil if Python set none).
function context.max_cycles()
	return max_cycles
end

return context
