-- Humans who join the world with a normal client, and chat (docs/humans.md).
-- The hooks ask it for the humans' passwords at login and pass it each tick's
-- request; the tick result's "world" part comes from here.
--
-- deps.names, deps.passwords: the env's humans in order, and their passwords;
-- deps.agents(), deps.is_agent(name): results.lua's; deps.checks: checks.lua.

local deps = ...
local names, passwords, checks = deps.names, deps.passwords, deps.checks
local humans = {}

local scores = {}  -- name -> the episode's score (craftium_ma.add_human_reward)
local last = {}    -- name -> last known {position, yaw, hp}, kept after it left
local heard = {}   -- chat since the last tick: {from, text}
local events = {}  -- humans joining and leaving since the last tick: {type, name}

local function clear_scores()
	for _, name in ipairs(names) do
		scores[name] = 0
	end
end
clear_scores()

--- A configured human's password, or nil for anyone else.
function humans.password(name)
	return passwords[name]
end

--- Names of the humans in the game now, in the order the env lists them.
function humans.humans()
	local present = {}
	for _, name in ipairs(names) do
		if core.get_player_by_name(name) then
			present[#present + 1] = name
		end
	end
	return present
end

--- Whether player (ObjectRef or name) is one of the env's humans.
function humans.is_human(player)
	return passwords[checks.player_name(player)] ~= nil
end

--- Add to a human's score for the episode (env.humans_state(), not the agents'
--- rewards); scores start at 0 at every reset.
function humans.add_human_reward(player, reward)
	local name = checks.player_name(player)
	if not passwords[name] then
		error("craftium_ma.add_human_reward: '" .. tostring(name) .. "' is not a human; " ..
			"the humans are " .. (#names > 0 and table.concat(names, ", ") or "none"), 2)
	end
	checks.reward("add_human_reward", reward)
	scores[name] = scores[name] + reward
end

--- The human's score in this episode.
function humans.human_score(player)
	return scores[checks.player_name(player)]
end

humans.reset = clear_scores

-- Humans get play privileges only, whatever default_privs says; their accounts
-- are written at login like the agents' (accounts.lua).
function humans.on_admitted(name)
	if passwords[name] then
		core.get_auth_handler().set_privileges(name, {interact = true, shout = true})
	end
end

-- A joining human starts where agent_0 is, looking its way; a task's own
-- on_joinplayer runs after this one and may put it elsewhere.
core.register_on_joinplayer(function(player)
	local name = player:get_player_name()
	if not passwords[name] then
		return
	end
	local agent = core.get_player_by_name(deps.agents()[1] or "")
	if agent then
		player:set_pos(agent:get_pos())
		player:set_look_horizontal(agent:get_look_horizontal())
	end
	events[#events + 1] = {type = "human_joined", name = name}
end)

core.register_on_leaveplayer(function(player)
	local name = player:get_player_name()
	if passwords[name] then
		events[#events + 1] = {type = "human_left", name = name}
	end
end)

-- What players say in-game (chat commands are the builtin's and never get here).
core.register_on_chat_message(function(name, message)
	if not deps.is_agent(name) and message:sub(1, 1) ~= "/" and
			core.check_player_privs(name, {shout = true}) then
		heard[#heard + 1] = {from = name, text = message}
	end
	return false
end)

-- Chat that Python says in-game (env.post_chat, env.say): the tick request's
-- "chat" list of {from, text}, shown as chat of that name.
function humans.say(request_json)
	if not request_json:find('"chat"', 1, true) then
		return
	end
	local request = core.parse_json(request_json) or {}
	for _, message in ipairs(request.chat or {}) do
		local line = core.format_chat_message(message.from, message.text)
		core.chat_send_all(line)
		core.log("action", "CHAT: " .. line)
		heard[#heard + 1] = {from = message.from, text = message.text}
	end
end

local function state_of(name)
	local player = core.get_player_by_name(name)
	if player then
		local p = player:get_pos()
		last[name] = {position = {p.x, p.y, p.z},
			yaw = math.deg(player:get_look_horizontal()), hp = player:get_hp()}
	end
	local known = last[name] or {hp = 0}
	return {position = known.position, yaw = known.yaw, hp = known.hp, score = scores[name],
		connected = player ~= nil}
end

--- The tick result's "world" part, or nil when there is nothing to report:
--- chat heard and humans' joins since the last tick, and every human's state.
function humans.news()
	if #names == 0 and #heard == 0 and #events == 0 then
		return nil
	end
	local state = {}
	for _, name in ipairs(names) do
		state[name] = state_of(name)
	end
	local news = {heard = heard, events = events, humans = state}
	heard, events = {}, {}
	return news
end

return humans
