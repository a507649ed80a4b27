-- Humans who join the world with a normal client, and chat (docs/humans.md).
-- Loaded by init.lua, which asks it for the humans' passwords at login and
-- passes it each tick's request; the tick result's "world" part comes from here.

local read_logins, check_reward = ...
local humans = {}

local names, passwords = read_logins("craftium_ma_humans")  -- the env's humans, in order

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

local function name_of(player)
	if type(player) == "string" then
		return player
	end
	return player and player.is_player and player:is_player() and player:get_player_name()
end

--- A configured human's password, or nil for anyone else.
function humans.password(name)
	return passwords[name]
end

--- Names of the humans in the game now, in the order the env lists them.
function craftium_ma.humans()
	local present = {}
	for _, name in ipairs(names) do
		if core.get_player_by_name(name) then
			present[#present + 1] = name
		end
	end
	return present
end

--- Whether player (ObjectRef or name) is one of the env's humans.
function craftium_ma.is_human(player)
	return passwords[name_of(player)] ~= nil
end

--- Add to a human's score for the episode (env.humans_state(), not the agents'
--- rewards); scores start at 0 at every reset.
function craftium_ma.add_human_reward(player, reward)
	local name = name_of(player)
	if not passwords[name] then
		error("craftium_ma.add_human_reward: '" .. tostring(name) .. "' is not a human; " ..
			"the humans are " .. (#names > 0 and table.concat(names, ", ") or "none"), 2)
	end
	check_reward("add_human_reward", reward)
	scores[name] = scores[name] + reward
end

--- The human's score in this episode.
function craftium_ma.human_score(player)
	return scores[name_of(player)]
end

humans.reset = clear_scores

-- Humans get play privileges only, whatever default_privs says; their accounts
-- are written at login like the agents' (init.lua).
function humans.grant(name)
	core.get_auth_handler().set_privileges(name, {interact = true, shout = true})
end

-- A joining human starts where agent_0 is, looking its way; a task's own
-- on_joinplayer runs after this one and may put it elsewhere.
core.register_on_joinplayer(function(player)
	local name = player:get_player_name()
	if not passwords[name] then
		return
	end
	local agent = core.get_player_by_name(craftium_ma.agents()[1] or "")
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
	if not craftium_ma.is_agent(name) and message:sub(1, 1) ~= "/" and
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
