-- craftium_ma: the bridge between the lock-step server and Python, and the
-- API that task mods use. See docs/lua_api.md.
--
-- The patched server calls two hooks on this mod:
--   core.craftium_ma_reset(step, 0, request_json)  at every env reset
--   core.craftium_ma_tick(step, dtime, request_json)  after every server tick;
--                                                  returns the step's results
--                                                  (request: patch 0017)
-- Rewards accumulate within a step and are cleared once reported.

craftium_ma = {}

-- Players the launcher made accounts for: the setting holds name:password,...;
-- returns the names in order and a name -> password table.
local function read_logins(setting)
	local names, passwords = {}, {}
	for entry in (core.settings:get(setting) or ""):gmatch("[^,]+") do
		local name, password = entry:match("^([^:]+):(.*)$")
		names[#names + 1] = name
		passwords[name] = password
	end
	return names, passwords
end

local agents, passwords = read_logins("craftium_ma_agents")  -- agent names in order; passwords
local allow_spectators = core.settings:get_bool("craftium_ma_allow_spectators", false)

local results = {}    -- name -> this step's {reward, terminated, truncated, info}
local state = {}      -- the global state vector, see craftium_ma.set_state
local options = {}    -- task options passed from Python at reset
local episode_started = false  -- a reset has run: options, seed and rng are the episode's
local seed = 0
local rng = PcgRandom(0)  -- the episode's random numbers, seeded at reset
local steps = 0           -- env steps since the reset
local max_cycles = nil    -- the episode's length limit, if Python set one
local reset_callbacks, step_callbacks = {}, {}
local state_parts = nil  -- {shared, per_agent}, see craftium_ma.register_state
local areas = {}              -- {minp, maxp, on_loaded, loaded}
local pending_reset = nil     -- a reset that waits for the areas to load
local episode = dofile(core.get_modpath("craftium_ma") .. "/episode.lua")
local humans  -- humans.lua, loaded after the API it uses

local function clear_results()
	for _, name in ipairs(agents) do
		results[name] = {reward = 0, terminated = false, truncated = false, info = {}}
	end
end
clear_results()

local function result_of(player, level)
	local name = player
	if type(player) == "userdata" and player.get_player_name then
		name = player:get_player_name()
	end
	local result = results[name]
	if not result then
		error("craftium_ma: unknown agent '" .. tostring(name) .. "'; the agents are " ..
			table.concat(agents, ", "), level + 1)
	end
	return result
end

--- Agent names, in order (agent_0, agent_1, ...).
function craftium_ma.agents()
	return table.copy(agents)
end

--- Whether player (ObjectRef or name) is one of the agents.
function craftium_ma.is_agent(player)
	local name = type(player) == "string" and player or
		(player and player.is_player and player:is_player() and player:get_player_name())
	return results[name] ~= nil
end

-- Errors in the API blame the task's line that called it (error level 3:
-- the caller of the API function that called this check).
local function check_reward(fn, reward)
	if type(reward) ~= "number" or reward ~= reward then
		error("craftium_ma." .. fn .. ": the reward must be a number, got " ..
			(reward ~= reward and "nan" or type(reward) .. " " .. tostring(reward)), 3)
	end
end

local function check_function(fn, value)
	if type(value) ~= "function" then
		error("craftium_ma." .. fn .. ": give a function, got " .. type(value), 3)
	end
end

function craftium_ma.set_reward(player, reward)
	local result = result_of(player, 2)
	check_reward("set_reward", reward)
	result.reward = reward
end

function craftium_ma.add_reward(player, reward)
	local result = result_of(player, 2)
	check_reward("add_reward", reward)
	result.reward = result.reward + reward
end

--- The agent's episode ends this step (Python removes it from env.agents).
function craftium_ma.set_termination(player)
	result_of(player, 2).terminated = true
end

function craftium_ma.set_truncation(player)
	result_of(player, 2).truncated = true
end

--- Every agent terminates this step.
function craftium_ma.end_episode()
	for _, name in ipairs(agents) do
		results[name].terminated = true
	end
end

--- infos[agent][key] = value: a number, string, boolean or flat array of numbers.
function craftium_ma.set_info(player, key, value)
	local result = result_of(player, 2)
	if type(key) ~= "string" then
		error("craftium_ma.set_info: the key must be a string, got " .. type(key), 2)
	end
	local kind = type(value)
	if kind == "table" then
		for i, v in pairs(value) do
			if type(i) ~= "number" or type(v) ~= "number" then
				error("craftium_ma.set_info: '" .. key .. "' must be a flat array of numbers, " ..
					"got a table with the " .. type(i) .. " key " .. tostring(i) .. " holding a " ..
					type(v), 2)
			end
		end
	elseif kind ~= "number" and kind ~= "string" and kind ~= "boolean" then
		error("craftium_ma.set_info: '" .. key .. "' must be a number, string, boolean or " ..
			"flat array of numbers, got " .. kind, 2)
	end
	result.info[key] = value
end

--- The global state vector returned by env.state() (a flat array of numbers).
function craftium_ma.set_state(vector)
	if type(vector) ~= "table" then
		error("craftium_ma.set_state: the state must be a flat array of numbers, got " ..
			type(vector), 2)
	end
	state = vector
end

--- The global state vector: shared() followed, for each agent in order, by
--- per_agent(player); both return flat arrays of numbers and either may be nil.
--- It is computed after every reset and every env step (after the step
--- callbacks), so a task need not call set_state.
function craftium_ma.register_state(shared, per_agent)
	state_parts = {shared = shared, per_agent = per_agent}
end

local function append(list, values)
	for _, v in ipairs(values) do
		list[#list + 1] = v
	end
end

local function compute_state()
	if not state_parts then
		return
	end
	local s = {}
	append(s, state_parts.shared and state_parts.shared() or {})
	if state_parts.per_agent then
		for _, player in ipairs(craftium_ma.agent_players()) do
			append(s, state_parts.per_agent(player))
		end
	end
	state = s
end

--- The options that Python passed (task_options), as a table; known from the
--- first reset on, so not at load time.
function craftium_ma.options()
	if not episode_started then
		error("craftium_ma.options() at load time: the options are known from the first " ..
			"reset on; call it in a register_on_reset or register_on_step function", 2)
	end
	return options
end

--- The seed of the current episode.
function craftium_ma.seed()
	return seed
end

--- The episode's PcgRandom, seeded from reset(seed=...): draw all randomness from it.
function craftium_ma.rng()
	return rng
end

--- Env steps since the reset, and the episode's max_cycles (nil if unknown).
function craftium_ma.step_count()
	return steps
end

function craftium_ma.max_cycles()
	return max_cycles
end

--- fn(seed, options) runs at every reset, in registration order.
function craftium_ma.register_on_reset(fn)
	check_function("register_on_reset", fn)
	reset_callbacks[#reset_callbacks + 1] = fn
end

--- fn(dtime) runs once per env step, after the server's tick.
function craftium_ma.register_on_step(fn)
	check_function("register_on_step", fn)
	step_callbacks[#step_callbacks + 1] = fn
end

--- The task's world lives in minp..maxp: the server generates it at start and
--- calls on_loaded() (build the arena there), then keeps a snapshot of it (nodes,
--- metadata, node timers) and keeps its map blocks active. Every reset writes the
--- snapshot back before the reset callbacks run; resets wait until the areas are
--- loaded.
function craftium_ma.register_area(minp, maxp, on_loaded)
	areas[#areas + 1] = {minp = vector.new(minp), maxp = vector.new(maxp),
		on_loaded = on_loaded, loaded = false}
end

local function areas_loaded()
	for _, area in ipairs(areas) do
		if not area.loaded then
			return false
		end
	end
	return true
end

-- Everything a client can be sent from inside an area is generated at the start
-- too: blocks generated on demand would reach clients whenever the emerge thread
-- finished them, and the same seed would not always give the same frames.
local SEND_MARGIN = 16 * (tonumber(core.settings:get("max_block_send_distance")) or 0)

core.register_on_mods_loaded(function()
	core.after(0, function()
		for _, area in ipairs(areas) do
			local margin = vector.new(SEND_MARGIN, SEND_MARGIN, SEND_MARGIN)
			core.emerge_area(area.minp - margin, area.maxp + margin, function(_, _, remaining)
				if remaining == 0 then
					if area.on_loaded then
						area.on_loaded()
					end
					episode.forceload(area)
					episode.snapshot(area)
					area.loaded = true
				end
			end)
		end
	end)
end)

-- The HUD parts the manifest switches on (task.toml's hud, nametags); every
-- other part is off. Applied at every reset, before the task's reset hooks.
local HUD_PARTS = {"hotbar", "healthbar", "breathbar", "crosshair", "wielditem"}
local hud_setting = core.settings:get("craftium_ma_hud")
local show_nametags = core.settings:get_bool("craftium_ma_nametags", true)

local function apply_hud()
	if not hud_setting then
		return  -- a session without a manifest (the engine tests): Luanti's defaults
	end
	local flags = {}
	for _, part in ipairs(HUD_PARTS) do
		flags[part] = false
	end
	for part in hud_setting:gmatch("[^,]+") do
		flags[part] = true
	end
	for _, player in ipairs(craftium_ma.agent_players()) do
		player:hud_set_flags(flags)
		if not show_nametags then
			player:set_nametag_attributes({color = {a = 0, r = 0, g = 0, b = 0},
				bgcolor = {a = 0, r = 0, g = 0, b = 0}})
		end
	end
end

-- A reset first clears what the last episode left (episode.lua): objects,
-- the agents' player state, the areas, Lua's math.random.
local function run_reset(request)
	episode_started = true
	seed = request.seed or 0
	options = request.options or {}
	max_cycles = request.max_cycles
	steps = 0
	rng = PcgRandom(seed)
	math.randomseed(seed)
	clear_results()
	humans.reset()
	episode.remove_objects()
	for _, player in ipairs(craftium_ma.agent_players()) do
		episode.reset_player(player)
	end
	for _, area in ipairs(areas) do
		episode.restore(area)
	end
	apply_hud()
	for _, fn in ipairs(reset_callbacks) do
		fn(seed, options)
	end
	compute_state()
end

-- Runs the requested reset once the task areas are loaded.
local function reset_when_loaded()
	if pending_reset and areas_loaded() then
		run_reset(pending_reset)
		pending_reset = nil
	end
end

dofile(core.get_modpath("craftium_ma") .. "/lib.lua")
humans = assert(loadfile(core.get_modpath("craftium_ma") .. "/humans.lua"))(read_logins,
	check_reward)

core.craftium_ma_reset = function(step, _, request_json)
	pending_reset = core.parse_json(request_json) or {}
	reset_when_loaded()
end

core.craftium_ma_tick = function(step, dtime, request_json)
	humans.say(request_json)
	reset_when_loaded()
	if dtime > 0 then
		steps = steps + 1
		for _, fn in ipairs(step_callbacks) do
			fn(dtime)
		end
		compute_state()
	end
	-- HP is the server's: a pipelined client's own value is a step behind. An
	-- agent's team (craftium_ma.set_teams) is in its infos, unless the task set one.
	for _, name in ipairs(agents) do
		local player = core.get_player_by_name(name)
		results[name].hp = player and player:get_hp() or 0
		results[name].info.team = results[name].info.team or craftium_ma.team_of(name)
	end
	local out = core.write_json({step = step, agents = results, state = state,
		loading = pending_reset ~= nil, world = humans.news()})
	clear_results()
	return out
end

-- Only the agents and the env's humans join, each with its password (unless
-- spectators are allowed). The account is (re)written just before its login is
-- checked, so the server authenticates it against the configured password.
core.register_on_prejoinplayer(function(name)
	local password = passwords[name] or humans.password(name)
	if not password then
		if not allow_spectators then
			return "craftium-ma: only the configured agents and humans may join this server"
		end
		return
	end
	local auth = core.get_auth_handler()
	local hash = core.get_password_hash(name, password)
	if auth.get_auth(name) then
		auth.set_password(name, hash)
	else
		auth.create_auth(name, hash)
	end
	if humans.password(name) then
		humans.grant(name)
	end
end)
