-- night_sky: a stone floor at midnight; agent_0 looks up at the stars, through the
-- particles of a spawner whose velocities and sizes each client draws at random.

local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = 8, y = 0, z = 8}
craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.edit_nodes(MINP, MAXP, function(nodes) nodes.fill(MINP, MAXP, "default:stone") end)
end)

craftium_ma.register_on_reset(function()
	core.set_timeofday(0)
	local player = craftium_ma.agent_players()[1]
	craftium_ma.spawn(player, {x = 4, y = 0.5, z = 4}, 0, -60)
	core.add_particlespawner({
		amount = 200, time = 0, texture = "default_stone.png",
		minpos = {x = 3, y = 2, z = 5}, maxpos = {x = 5, y = 3, z = 7},
		minvel = {x = -1, y = 0, z = -1}, maxvel = {x = 1, y = 1, z = 1},
		minexptime = 1, maxexptime = 3, minsize = 1, maxsize = 4,
	})
end)
