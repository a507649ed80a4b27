-- capture_the_flag: red defends z < length / 2, blue the other half. The field's
-- inside spans x in 1 .. width, z in 1 .. length, its floor at y = 0.
-- Option reward = "progress" adds a dense shaping term (see register_shaping below).

local MAX = 64
local TEAMS = craftium_ma.task_teams()  -- the manifest's: red, blue
local WALL = "default:stonebrick"
local field = {length = 40, width = 24}
local flags = {}     -- team -> {base = pos, carrier = agent name or nil}
local carrying = {}  -- agent name -> team of the flag it carries
local scores = {}    -- team -> flags it scored this episode
local REWARDS = {score = true, progress = true}

for _, team in ipairs(TEAMS) do
	core.register_node("capture_the_flag:flag_" .. team, {
		description = team .. " flag",
		tiles = {"wool_" .. team .. ".png"},
		drawtype = "nodebox",
		-- a post two nodes tall with a banner two nodes wide across z at eye height, so that
		-- the flag shows in a 48 x 48 frame from the other base, against the end wall
		node_box = {type = "fixed", fixed = {
			{-0.05, -0.5, -0.05, 0.05, 1.5, 0.05},
			{-1, 0.3, -0.05, 1, 1.5, 0.05},
		}},
		paramtype = "light",
		walkable = false,
		pointable = false,
		diggable = false,
		groups = {not_in_creative_inventory = 1},
	})
end

craftium_ma.register_area({x = 0, y = 0, z = 0}, {x = MAX + 1, y = 3, z = MAX + 1})

-- The reset restored the area empty: the field of this episode's size.
local function build_field()
	local l = field.length
	craftium_ma.walled_arena({minp = {x = 0, y = 0, z = 0},
		maxp = {x = field.width + 1, y = 2, z = l + 1}, wall = WALL,
		floor = function(_, z, wall)
			if wall then
				return WALL
			elseif z == math.floor(l / 2) or z == math.floor(l / 2) + 1 then
				return "wool:white"  -- the middle line
			end
			return z <= l / 2 and "wool:red" or "wool:blue"
		end})
end

local function home(team)
	return flags[team].carrier == nil
end

local function place_flag(team)
	core.set_node(flags[team].base, {name = home(team) and "capture_the_flag:flag_" .. team or "air"})
end

local function in_half(team, pos)
	local red_half = pos.z < field.length / 2 + 1
	return (team == "red") == red_half
end

-- a team's spawn spots: 2 nodes to the left of its flag, to the right, then in front
-- of it, so that with up to two members (4 agents) no one hides the flag at spawn
local SPAWN_OFFSETS = {-1, 1, 0}

local function spawn_at_base(name, i)
	local team = craftium_ma.team_of(name)
	local base = flags[team].base
	local offset = SPAWN_OFFSETS[(i or 0) % 3 + 1]
	local z = base.z + (team == "red" and 1 or -1)
	craftium_ma.spawn(name, {x = base.x + 2 * offset, y = 0.5, z = z}, team == "red" and 0 or 180)
end

local function drop_flag(name)
	local team = carrying[name]
	if team then
		carrying[name] = nil
		flags[team].carrier = nil
		place_flag(team)
	end
end

craftium_ma.register_on_reset(function(seed, options)
	if not REWARDS[options.reward] then
		error(("capture_the_flag: option reward must be \"score\" or \"progress\", not %q")
			:format(tostring(options.reward)))
	end
	field.length = math.max(8, math.min(tonumber(options.length) or 40, MAX))
	field.width = math.max(4, math.min(tonumber(options.width) or 24, MAX))
	core.set_timeofday(0.5)
	build_field()
	craftium_ma.split_teams(TEAMS)
	local mid_x = math.floor(field.width / 2) + 1
	flags.red = {base = {x = mid_x, y = 1, z = 2}}
	flags.blue = {base = {x = mid_x, y = 1, z = field.length - 1}}
	carrying = {}
	scores = {red = 0, blue = 0}
	for _, team in ipairs(TEAMS) do
		place_flag(team)
	end
	for i, name in ipairs(craftium_ma.agents()) do
		spawn_at_base(name, math.floor((i - 1) / 2))
		craftium_ma.give(name, {})
	end
	if options.layout == "test" then
		-- agent_0 (red) stands in front of the blue flag, facing home;
		-- agent_1 (blue) one node behind it, facing it
		local b = flags.blue.base
		craftium_ma.spawn("agent_0", {x = b.x, y = 0.5, z = b.z - 1}, 180)
		craftium_ma.spawn("agent_1", {x = b.x, y = 0.5, z = b.z - 3}, 0)
		-- everyone else waits by the side walls
		for i = 3, #craftium_ma.agents() do
			craftium_ma.spawn("agent_" .. (i - 1), {x = 1, y = 0.5, z = i}, 90)
		end
	end
end)

-- Tagging: a hit on an enemy in the hitter's half, or on one carrying the hitter's
-- flag anywhere, sends the enemy home (no damage). Without the second case two carriers
-- waiting at their own bases could never be tagged, and neither team could score again.
core.register_on_punchplayer(function(victim, hitter)
	if not (hitter and hitter:is_player() and craftium_ma.is_agent(hitter) and
			craftium_ma.is_agent(victim)) then
		return
	end
	local team, enemy = craftium_ma.team_of(hitter), craftium_ma.team_of(victim)
	local name = victim:get_player_name()
	if team and enemy and team ~= enemy
			and (in_half(team, victim:get_pos()) or carrying[name] == team) then
		craftium_ma.set_info(name, "tagged", true)
		drop_flag(name)
		spawn_at_base(name)
	end
	return true
end)

local function near(pos, target, d)
	return math.abs(pos.x - target.x) <= d and math.abs(pos.z - target.z) <= d
end

craftium_ma.register_state(
	function() return {home("red") and 1 or 0, home("blue") and 1 or 0} end,
	function(player)
		local name, p = player:get_player_name(), player:get_pos()
		return {p.x, p.z, craftium_ma.team_of(name) == "red" and 0 or 1, carrying[name] and 1 or 0}
	end)

-- reward = "progress": a team's progress is its way on round trips out to the
-- enemy flag and back, in nodes seen from above: a round trip (twice the
-- distance between the bases) per flag scored, plus what is done of the current
-- one (the carrier's way home left, or the way out of the member nearest the
-- enemy flag plus the way back, taken from a round trip). A team's potential is
-- SHAPING times its progress less the other team's, and every step pays each
-- agent its team's change: walking out and carrying home pay as they happen,
-- tagging an enemy pays the way they lost, and scoring costs nothing, so no one
-- stops short of the base. Zero-sum: when both teams steal at once, neither can
-- score (a team's own flag must be home) and neither is paid for it; it pays
-- defending. An episode's shaping sums to its last potential less its first.
local SHAPING = 0.1

local function distance(p, q)
	return math.sqrt((p.x - q.x) ^ 2 + (p.z - q.z) ^ 2)
end

local function other(team)
	return team == "red" and "blue" or "red"
end

local function progress(team)
	local enemy = other(team)
	local base, enemy_base = flags[team].base, flags[enemy].base
	local way_back = distance(enemy_base, base)
	local left
	if flags[enemy].carrier then
		left = distance(core.get_player_by_name(flags[enemy].carrier):get_pos(), base)
	else
		left = math.huge
		for _, name in ipairs(craftium_ma.team_members(team)) do
			if craftium_ma.is_agent(name) then
				local way_out = distance(core.get_player_by_name(name):get_pos(), enemy_base)
				left = math.min(left, way_out + way_back)
			end
		end
	end
	return 2 * way_back * (scores[team] + 1) - left
end

craftium_ma.register_shaping(function()
	if craftium_ma.options().reward ~= "progress" then
		return nil
	end
	local lead = {red = SHAPING * (progress("red") - progress("blue"))}
	lead.blue = -lead.red
	local potentials = {}
	for _, name in ipairs(craftium_ma.agents()) do
		potentials[name] = lead[craftium_ma.team_of(name)]
	end
	return potentials
end)

craftium_ma.register_on_step(function()
	for _, name in ipairs(craftium_ma.agents()) do
		local pos = core.get_player_by_name(name):get_pos()
		local team = craftium_ma.team_of(name)
		local enemy = other(team)
		if not carrying[name] and home(enemy) and near(pos, flags[enemy].base, 1) then
			carrying[name] = enemy
			flags[enemy].carrier = name
			place_flag(enemy)
		elseif carrying[name] and home(team) and near(pos, flags[team].base, 1.5) then
			craftium_ma.add_team_reward(team, 1)
			scores[team] = scores[team] + 1
			drop_flag(name)
		end
	end
end)
