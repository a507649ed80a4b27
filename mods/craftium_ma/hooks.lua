-- The two hooks the patched server calls, as core.craftium_ma_reset and
-- core.craftium_ma_tick (init.lua); engine patch 0017 gives them the request of
-- the tick's reset or tick command. A reset waits, tick after tick, until the
-- task's areas are loaded.
--
-- deps: the bridge's modules by name (init.lua).

local m = ...
local hooks = {}

local pending_reset = nil  -- a reset that waits for the areas to load

-- A reset first clears what the last episode left (episode.lua, areas.lua):
-- objects, the agents' player state, the areas, Lua's math.random, the teams
-- (a task sets an episode's teams in its reset hook).
local function run_reset(request)
	m.context.begin(request)
	math.randomseed(m.context.seed())
	m.results.take()
	m.humans.reset()
	m.teams.set_teams({})
	m.episode.remove_objects()
	for _, player in ipairs(m.players.agent_players()) do
		m.episode.reset_player(player)
	end
	m.areas.restore_all()
	m.hud.apply(m.players.agent_players())
	m.callbacks.run_reset(m.context.seed(), m.context.options())
	m.shaping.begin()
	m.state.compute()
	m.observations.compute()
end

local function reset_when_loaded()
	if pending_reset and m.areas.loaded() then
		run_reset(pending_reset)
		pending_reset = nil
	end
end

--- At every env reset: (step, 0, request_json).
function hooks.reset(_, _, request_json)
	pending_reset = core.parse_json(request_json) or {}
	reset_when_loaded()
end

--- After every server tick: (step, dtime, request_json); returns the step's
--- results as JSON (docs/lua_api.md).
function hooks.tick(step, dtime, request_json)
	m.humans.say(request_json)
	reset_when_loaded()
	if dtime > 0 then
		m.context.count_step()
		m.shaping.pay()
		m.callbacks.run_step(dtime)
		m.state.compute()
		m.observations.compute()
	end
	-- HP is the server's: a pipelined client's own value is a step behind. An
	-- agent's team (craftium_ma.set_teams) is in its infos, unless the task set one.
	local agents = m.results.take()
	for name, result in pairs(agents) do
		local player = core.get_player_by_name(name)
		result.hp = player and player:get_hp() or 0
		result.info.team = result.info.team or m.teams.team_of(name)
	end
	return core.write_json({step = step, agents = agents, state = m.state.packed(),
		observations = m.observations.current(), loading = pending_reset ~= nil,
		world = m.humans.news()})
end

return hooks
