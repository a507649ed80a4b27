-- A test task for the lock-step engine. Agent i stands at x = 4*i on a stone
-- floor, facing +z, with a column of dig_immediate targets one node ahead.
-- Digging a target gives the digger +1. Options:
--   targets = false          no target columns (room to walk forward)
--   terminate = {name, step} set_termination(name) at that step
--   lua_error_at = step      raise a Lua error at that step
--   remove_targets_at = step the server removes the targets at that step
--   set_info_bad = true      call set_info with an unknown agent at reset
--   target_z, agent_z = z    the targets' and the agents' z (default 1 and -1)
--   brick_z = z              a brick column behind each target column, at that z
--   window = true            agent_0 (at agent_z = -3) looks through a one-node hole in
--                            a brick wall at z = 2 to 4; the targets (unless targets =
--                            false) are one column at x = 6, z = 40 instead, inside map
--                            block (0, 0, 2), where no ray from agent_0's eye to that
--                            block's centre or corners passes the hole

core.register_node("lockstep_test:target", {
	description = "Target",
	tiles = {"default_mese_block.png"},
	groups = {dig_immediate = 3},
	drop = "",
})

local MINP, MAXP = {x = -8, y = -1, z = -8}, {x = 24, y = 8, z = 40}

craftium_ma.register_area(MINP, MAXP, function()
	for x = MINP.x, MAXP.x do
		for z = MINP.z, MAXP.z do
			core.set_node({x = x, y = 0, z = z}, {name = "default:stone"})
		end
	end
end)

local server_time, steps = 0, 0

-- Top down: removing a column so changes the light of each removed node only
-- (sunlight never floods the removed nodes below it at once)
local function place_column(x, z, name)
	for y = 3, 1, -1 do
		core.set_node({x = x, y = y, z = z}, {name = name})
	end
end

local function place_agent_columns(z, name)
	for i = 1, #craftium_ma.agents() do
		place_column(4 * (i - 1), z, name)
	end
end

local function place_targets(name)
	local options = craftium_ma.options()
	if options.window then
		place_column(6, 40, name)
	else
		place_agent_columns(options.target_z or 1, name)
	end
end

craftium_ma.register_on_reset(function(seed, options)
	server_time, steps = 0, 0
	core.set_timeofday(0.5)
	place_targets(options.targets == false and "air" or "lockstep_test:target")
	if options.brick_z then
		place_agent_columns(options.brick_z, "default:brick")
	end
	if options.window then
		for z = 2, 4 do
			for x = -6, 6 do
				for y = 1, 7 do
					local hole = x == 1 and y == 2
					core.set_node({x = x, y = y, z = z}, {name = hole and "air" or "default:brick"})
				end
			end
		end
	end
	for i, agent in ipairs(craftium_ma.agents()) do
		local player = core.get_player_by_name(agent)
		player:set_pos({x = 4 * (i - 1), y = 0.5, z = options.agent_z or -1})
		player:set_look_horizontal(0)
		player:set_look_vertical(0)
		player:set_hp(20)
		-- the window view needs the whole frame (a reset keeps the flags)
		player:hud_set_flags({hotbar = not options.window, healthbar = not options.window,
			crosshair = not options.window, wielditem = not options.window})
	end
	if options.set_info_bad then
		craftium_ma.set_info("nobody", "x", 1)
	end
end)

core.register_on_dignode(function(pos, oldnode, digger)
	if oldnode.name == "lockstep_test:target" and digger and craftium_ma.is_agent(digger) then
		craftium_ma.add_reward(digger, 1)
	end
end)

craftium_ma.register_on_step(function(dtime)
	server_time = server_time + dtime
	steps = steps + 1
	local options = craftium_ma.options()
	for _, agent in ipairs(craftium_ma.agents()) do
		craftium_ma.set_info(agent, "server_time", server_time)
	end
	if options.terminate and options.terminate[2] == steps then
		craftium_ma.set_termination(options.terminate[1])
	end
	if options.remove_targets_at == steps then
		place_targets("air")
	end
	if options.lua_error_at == steps then
		error("lockstep_test: the error asked for at step " .. steps)
	end
end)
