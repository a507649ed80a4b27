-- craftium_ma: the bridge between the lock-step server and Python, and the
-- API that task mods use (docs/lua_api.md). This file loads the bridge's
-- modules, one concern each, gives each its dependencies, and assembles the
-- public craftium_ma table; it also reads every server setting that Python
-- sends the bridge (the launcher's logins, Task.bridge_settings()).

local modpath = core.get_modpath("craftium_ma")

--- Run the module `name`.lua of this folder with its dependencies; returns its table.
local function load_module(name, deps)
	return assert(loadfile(modpath .. "/" .. name .. ".lua"))(deps or {})
end

local checks = load_module("checks")
local accounts = load_module("accounts")
local agent_names, agent_passwords = accounts.parse(core.settings:get("craftium_ma_agents") or "")
local human_names, human_passwords = accounts.parse(core.settings:get("craftium_ma_humans") or "")

local context = load_module("context", {new_rng = PcgRandom})
local results = load_module("results", {agents = agent_names, checks = checks})
local callbacks = load_module("callbacks", {checks = checks})
local shaping = load_module("shaping",
	{agents = results.agents, add_reward = results.add_reward, checks = checks})
local players = load_module("players",
	{agents = results.agents, rng = context.rng, checks = checks})
local state = load_module("state", {agent_players = players.agent_players})
local observations = load_module("observations", {agent_players = players.agent_players,
	checks = checks, declared = (core.settings:get("craftium_ma_observations") or ""):split(","),
	observed = (core.settings:get("craftium_ma_observe") or ""):split(",")})
local humans = load_module("humans", {names = human_names, passwords = human_passwords,
	agents = results.agents, is_agent = results.is_agent, checks = checks})
local teams = load_module("teams", {agents = results.agents, is_agent = results.is_agent,
	add_reward = results.add_reward, is_human = humans.is_human,
	add_human_reward = humans.add_human_reward, checks = checks,
	declared = (core.settings:get("craftium_ma_teams") or ""):split(",")})
local hud = load_module("hud", {parts = core.settings:get("craftium_ma_hud_parts"),
	shown = core.settings:get("craftium_ma_hud"),
	nametags = core.settings:get_bool("craftium_ma_nametags", true)})
local episode = load_module("episode")
-- Blocks up to this far from an area can be sent to a client: they are generated too.
local areas = load_module("areas",
	{send_margin = 16 * (tonumber(core.settings:get("max_block_send_distance")) or 0)})
local build = load_module("build")

local hooks = load_module("hooks", {context = context, results = results, callbacks = callbacks,
	shaping = shaping, players = players, state = state, observations = observations,
	humans = humans, teams = teams, hud = hud, episode = episode, areas = areas})
core.craftium_ma_reset = hooks.reset
core.craftium_ma_tick = hooks.tick

accounts.admit_only(function(name) return agent_passwords[name] or human_passwords[name] end,
	core.settings:get_bool("craftium_ma_allow_spectators", false), humans.on_admitted)

-- The public API: each function is its module's own, so errors blame the task's line.
craftium_ma = {
	-- agents and their step results (results.lua)
	agents = results.agents,
	is_agent = results.is_agent,
	set_reward = results.set_reward,
	add_reward = results.add_reward,
	set_termination = results.set_termination,
	set_truncation = results.set_truncation,
	end_episode = results.end_episode,
	set_info = results.set_info,
	-- the global state vector (state.lua)
	set_state = state.set_state,
	register_state = state.register_state,
	agent_state = state.agent_state,
	-- the observations the task declares (observations.lua)
	register_observation = observations.register_observation,
	-- the episode (context.lua) and the task's callbacks (callbacks.lua)
	options = context.options,
	seed = context.seed,
	rng = context.rng,
	step_count = context.step_count,
	max_cycles = context.max_cycles,
	register_on_reset = callbacks.register_on_reset,
	register_on_step = callbacks.register_on_step,
	-- reward shaping (shaping.lua)
	register_shaping = shaping.register_shaping,
	-- the task's world (areas.lua, build.lua)
	register_area = areas.register_area,
	walled_arena = build.walled_arena,
	edit_nodes = build.edit_nodes,
	-- the agents' players (players.lua)
	agent_players = players.agent_players,
	spawn = players.spawn,
	random_positions = players.random_positions,
	give = players.give,
	-- teams (teams.lua)
	set_teams = teams.set_teams,
	split_teams = teams.split_teams,
	task_teams = teams.task_teams,
	team_of = teams.team_of,
	team_members = teams.team_members,
	add_team_reward = teams.add_team_reward,
	-- humans (humans.lua)
	humans = humans.humans,
	is_human = humans.is_human,
	add_human_reward = humans.add_human_reward,
	human_score = humans.human_score,
}
