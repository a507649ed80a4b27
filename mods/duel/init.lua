-- duel: two agents with steel swords in a closed arena. A hit landed gives the
-- hitter +1 and the victim -1; the episode ends when an agent's HP reaches 0.
-- Arena: inside x, z in 1 .. SIZE, floor at y = 0, walls y = 1 .. 4. The
-- nodes cannot be dug with a sword.
-- Option reward = "distance" adds a dense shaping term (see register_shaping below).

local SIZE = 11
local FLOOR, WALL = "default:stone", "default:brick"

local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = SIZE + 1, y = 5, z = SIZE + 1}

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.walled_arena({minp = MINP, maxp = MAXP, floor = FLOOR, wall = WALL, wall_height = 4})
end)

-- No death screen: a dead agent lies still until the reset revives it.
function core.show_death_screen() end

core.register_on_punchplayer(function(victim, hitter, _, _, _, damage)
	if damage > 0 and victim:get_hp() > 0 and craftium_ma.is_agent(hitter)
			and craftium_ma.is_agent(victim) then
		craftium_ma.add_reward(hitter, 1)
		craftium_ma.add_reward(victim, -1)
	end
end)

-- reward = "distance": the potential of a state is minus SHAPING times the distance
-- (nodes, seen from above) between the two fighters; every step pays both its change.
-- The same for both, so the hits stay zero-sum; an episode's shaping sums to
-- the last potential less the first (it cannot be farmed). In self-play it pays the
-- steps that bring the fighters together, where a copy would otherwise learn that
-- keeping apart costs nothing.
local SHAPING = 0.1
local REWARDS = {hits = true, distance = true}
craftium_ma.register_shaping(function()
	if craftium_ma.options().reward ~= "distance" then
		return nil
	end
	local a, b = unpack(craftium_ma.agent_players())
	local p, q = a:get_pos(), b:get_pos()
	return -SHAPING * math.sqrt((p.x - q.x) ^ 2 + (p.z - q.z) ^ 2)
end)

craftium_ma.register_state(nil, craftium_ma.agent_state({"x", "z", "yaw", "hp"}))
craftium_ma.register_observation("hp", function(player) return player:get_hp() end)

craftium_ma.register_on_reset(function(seed, options)
	if not REWARDS[options.reward] then
		error(("duel: option reward must be \"hits\" or \"distance\", not %q")
			:format(tostring(options.reward)))
	end
	local rng = craftium_ma.rng()
	core.set_timeofday(0.5)
	for i, player in ipairs(craftium_ma.agent_players()) do
		local pos, yaw
		if options.layout == "test" then
			-- face to face, two nodes apart, agent_1 with its back to the wall
			pos, yaw = {x = 6, y = 0.5, z = SIZE - 4 + 2 * i}, 180 * (i - 1)
		else
			-- agent_0 in the south third, agent_1 in the north third, roughly facing
			local z = i == 1 and rng:next(2, 4) or rng:next(SIZE - 3, SIZE - 1)
			pos = {x = rng:next(2, SIZE - 1), y = 0.5, z = z}
			yaw = 180 * (i - 1) + rng:next(-45, 45)
		end
		craftium_ma.spawn(player, pos, yaw)
		craftium_ma.give(player, {"default:sword_steel"})
	end
end)

craftium_ma.register_on_step(function()
	for _, player in ipairs(craftium_ma.agent_players()) do
		if player:get_hp() == 0 then
			craftium_ma.end_episode()
		end
	end
end)
