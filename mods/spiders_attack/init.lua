-- spiders_attack: the agents, one team with steel swords, fight spiders in a
-- closed cage. Round k brings k spiders, up to `rounds`; the next round starts
-- when every spider of the round is dead, and clearing the last round ends the
-- episode. +1 to the agent that kills a spider; an agent whose HP reaches 0
-- terminates. Options: rounds, spider_hp, spider_damage, spider_speed, layout
-- ("default" or "test": a fixed layout for the scripted tests).

-- The cage lies inside one map block (nodes 0..15): the block at every agent's
-- feet, which a reset waits for, so every frame shows all of it.
local LO, HI = 1, 14 -- the walls; the cage inside is x, z in 2 .. 13, floor at y = 0
local PITCH = 35     -- agents look down at spiders in front of them
local SPIDER = "spiders_attack:spider"
local STOP = 1.4     -- a spider stops this far (horizontally) from its target
local REACH = 1.8    -- and bites within this distance
local COOLDOWN = 1.0 -- seconds between bites

local spiders = {}   -- ObjectRefs of this episode's spiders, in spawn order
local round, finished = 0, false
local kills, dead = {}, {}
local opts = {}

local function number_option(options, key, default)
	return tonumber(options[key]) or default
end

-- Floor and walls cannot be pointed at: a held attack that starts on a node
-- never hits an object until released (the client's rule against hitting while
-- digging), so with nothing else to point at it always reaches the spiders.
core.register_node("spiders_attack:floor", {
	description = "Cage floor",
	tiles = {"default_stone.png"},
	pointable = false,
	is_ground_content = false,
	groups = {not_in_creative_inventory = 1},
})

core.register_node("spiders_attack:wall", {
	description = "Cage wall",
	tiles = {"default_stone_brick.png"},
	pointable = false,
	is_ground_content = false,
	groups = {not_in_creative_inventory = 1},
})

-- The builtin death screen is a formspec with a respawn button: agents get none,
-- they stay dead (terminated) until the next reset revives them.
local show_death_screen = core.show_death_screen
function core.show_death_screen(player, reason)
	if not craftium_ma.is_agent(player) then
		show_death_screen(player, reason)
	end
end

local function live_agents()
	local out = {}
	for _, player in ipairs(craftium_ma.agent_players()) do
		if player:get_hp() > 0 then
			out[#out + 1] = player
		end
	end
	return out
end

local black, eyes = "wool_black.png", "wool_black.png^[fill:3x3:3,5:#ff2020^[fill:3x3:10,5:#ff2020"

core.register_entity(SPIDER, {
	initial_properties = {
		hp_max = 10,
		physical = true,
		collide_with_objects = false,
		collisionbox = {-0.4, -0.4, -0.4, 0.4, 0.4, 0.4},
		visual = "cube",
		visual_size = {x = 0.8, y = 0.8, z = 0.8},
		textures = {black, black, black, black, eyes, black},
		static_save = false,
	},

	on_activate = function(self)
		self.cooldown = 0
		self.object:set_acceleration({x = 0, y = -10, z = 0})
	end,

	-- walk towards the nearest living agent; bite it when close
	on_step = function(self, dtime)
		local pos = self.object:get_pos()
		local target, best = nil, math.huge
		for _, player in ipairs(live_agents()) do
			local d = vector.distance(pos, player:get_pos())
			if d < best then
				target, best = player, d
			end
		end
		self.cooldown = math.max(0, self.cooldown - dtime)
		local vel = {x = 0, y = self.object:get_velocity().y, z = 0}
		if target then
			local tp = target:get_pos()
			local dx, dz = tp.x - pos.x, tp.z - pos.z
			local flat = math.sqrt(dx * dx + dz * dz)
			self.object:set_yaw(math.atan2(-dx, dz))
			if flat > STOP then
				vel.x, vel.z = dx / flat * opts.speed, dz / flat * opts.speed
			end
			if flat <= REACH and math.abs(tp.y - pos.y) < 1.5 and self.cooldown == 0 then
				-- set_hp rather than a punch: no knockback to carry into the next episode
				target:set_hp(target:get_hp() - opts.damage, {type = "set_hp", cause = "spider"})
				self.cooldown = COOLDOWN
			end
		end
		self.object:set_velocity(vel)
	end,

	on_death = function(self, killer)
		if killer and craftium_ma.is_agent(killer) then
			local name = killer:get_player_name()
			kills[name] = kills[name] + 1
			craftium_ma.add_reward(name, 1)
		end
	end,
})

local function add_spider(pos)
	local obj = core.add_entity(pos, SPIDER)
	obj:set_properties({hp_max = opts.hp})
	obj:set_hp(opts.hp)
	spiders[#spiders + 1] = obj
end

local function spiders_alive()
	local n = 0
	for _, obj in ipairs(spiders) do
		if obj:get_pos() and obj:get_hp() > 0 then
			n = n + 1
		end
	end
	return n
end

-- k spiders at random places at least 4 nodes from every living agent (if found)
local function start_round(k)
	local rng = craftium_ma.rng()
	round = k
	for _ = 1, k do
		local pos
		for _ = 1, 50 do
			pos = {x = rng:next(LO + 1, HI - 1), y = 0.9, z = rng:next(LO + 1, HI - 1)}
			local far = true
			for _, player in ipairs(live_agents()) do
				far = far and vector.distance(pos, player:get_pos()) >= 4
			end
			if far then
				break
			end
		end
		add_spider(pos)
	end
end

local MINP, MAXP = {x = LO, y = 0, z = LO}, {x = HI, y = 5, z = HI}

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, floor = "spiders_attack:floor",
		wall = "spiders_attack:wall"})
end)

craftium_ma.register_state(function() return {spiders_alive(), round} end,
	craftium_ma.agent_state({"x", "z", "hp"}))
craftium_ma.register_observation("nearest_spider", function(player)
	local here, nearest, distance = player:get_pos(), nil, math.huge
	for _, obj in ipairs(spiders) do
		local pos = obj:get_pos()
		if pos and obj:get_hp() > 0 and vector.distance(here, pos) < distance then
			nearest, distance = pos, vector.distance(here, pos)
		end
	end
	return nearest and {nearest.x, nearest.z, 1} or {0, 0, 0}
end)

craftium_ma.register_on_reset(function(seed, options)
	local rng = craftium_ma.rng()
	opts = {rounds = number_option(options, "rounds", 5),
		hp = number_option(options, "spider_hp", 10),
		damage = number_option(options, "spider_damage", 2),
		speed = number_option(options, "spider_speed", 2)}
	core.set_timeofday(0.5)
	spiders, round, finished, kills, dead = {}, 0, false, {}, {}
	local test = options.layout == "test"
	local places = craftium_ma.random_positions({x = LO + 3, y = 0.5, z = LO + 3},
		{x = HI - 3, y = 0.5, z = HI - 3}, #craftium_ma.agents())
	for i, player in ipairs(craftium_ma.agent_players()) do
		local yaw = rng:next(0, 359)
		if test then
			-- agent_0 faces the first spider; the others stand in the far corner
			places[i] = i == 1 and {x = 3, y = 0.5, z = 3} or {x = 15 - i, y = 0.5, z = 12}
			yaw = i == 1 and 0 or 180
		end
		craftium_ma.spawn(player, places[i], yaw, PITCH)
		craftium_ma.give(player, {"default:sword_steel"})
		kills[player:get_player_name()] = 0
	end
	if test then
		round = 1
		add_spider({x = 3, y = 0.9, z = 5.5})
	else
		start_round(1)
	end
end)

craftium_ma.register_on_step(function()
	for _, player in ipairs(craftium_ma.agent_players()) do
		local name = player:get_player_name()
		if not dead[name] and player:get_hp() == 0 then
			dead[name] = true
			craftium_ma.set_termination(name)
		end
		craftium_ma.set_info(name, "kills", kills[name])
	end
	if not finished and spiders_alive() == 0 then
		if round < opts.rounds then
			start_round(round + 1)
		else
			-- every round cleared: the team survived
			finished = true
			craftium_ma.end_episode()
		end
	end
end)
