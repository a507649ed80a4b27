-- What every reset clears before the task's reset callbacks run, so that an
-- episode plays as it would in a fresh env, whatever the env ran before
-- (docs/environments.md, "Clean episodes"). The engine restarts its own timers
-- and random numbers and has each client start over (engine patches 0010, 0011);
-- this part is the Lua-visible state. Loaded by init.lua.

local episode = {}

-- Each agent's player as it was at its first reset (it had just joined): the
-- state that tasks and built-in code may change during an episode.
local joined = {}

local function remember(player)
	local fov, fov_multiplier, fov_transition = player:get_fov()
	return {
		properties = player:get_properties(),
		physics = player:get_physics_override(),
		nametag = player:get_nametag_attributes(),
		hud_flags = player:hud_get_flags(),
		fov = {fov, fov_multiplier, fov_transition},
		eye_offset = {player:get_eye_offset()},
		local_animation = {player:get_local_animation()},
		sky = player:get_sky(true),
		sun = player:get_sun(),
		moon = player:get_moon(),
		stars = player:get_stars(),
		clouds = player:get_clouds(),
		lighting = player:get_lighting(),
		inventory = player:get_inventory():get_lists(),
	}
end

--- Put an agent back into the state it joined in: properties, physics, name tag,
--- HUD flags, FOV, eye offset, animations, sky, lighting, inventory, health and
--- breath; detached, standing still.
function episode.reset_player(player)
	local name = player:get_player_name()
	joined[name] = joined[name] or remember(player)
	local s = joined[name]
	player:set_detach()
	player:set_properties(s.properties)
	player:set_physics_override(s.physics)
	player:set_nametag_attributes(s.nametag)
	player:hud_set_flags(s.hud_flags)
	player:set_fov(unpack(s.fov))
	player:set_eye_offset(unpack(s.eye_offset))
	player:set_local_animation(unpack(s.local_animation))
	player:set_sky(s.sky)
	player:set_sun(s.sun)
	player:set_moon(s.moon)
	player:set_stars(s.stars)
	player:set_clouds(s.clouds)
	player:set_lighting(s.lighting)
	player:get_inventory():set_lists(s.inventory)
	player:set_hp(s.properties.hp_max)
	player:set_breath(s.properties.breath_max)
	if player_api then  -- minetest_game animates players from their controls
		player_api.set_animation(player, "stand")
	end
end

--- Remove every object that is not a player: dropped items, the last episode's
--- entities, whatever built-in code spawned.
function episode.remove_objects()
	for _, obj in pairs(core.object_refs) do
		if not obj:is_player() then
			obj:remove()
		end
	end
end

-- Node metadata and node timers are not part of a VoxelManip's data: they are
-- kept beside the area's nodes and written back with them.
local timed_nodes  -- names of the nodes with an on_timer callback

local function nodes_with_timers()
	if not timed_nodes then
		timed_nodes = {}
		for name, def in pairs(core.registered_nodes) do
			if def.on_timer then
				timed_nodes[#timed_nodes + 1] = name
			end
		end
	end
	return timed_nodes
end

--- The area's nodes (with their light), metadata and running node timers.
function episode.snapshot(area)
	local vm = core.get_voxel_manip(area.minp, area.maxp)
	area.data, area.param2, area.light = vm:get_data(), vm:get_param2_data(), vm:get_light_data()
	area.meta, area.timers = {}, {}
	for _, pos in ipairs(core.find_nodes_with_meta(area.minp, area.maxp)) do
		area.meta[#area.meta + 1] = {pos = pos, fields = core.get_meta(pos):to_table()}
	end
	for _, pos in ipairs(core.find_nodes_in_area(area.minp, area.maxp, nodes_with_timers())) do
		local timer = core.get_node_timer(pos)
		if timer:is_started() then
			area.timers[#area.timers + 1] = {pos = pos, timeout = timer:get_timeout(),
				elapsed = timer:get_elapsed()}
		end
	end
end

--- Write the snapshot back: nodes, light, metadata and node timers as they were
--- (light too: the task's changes update it from there, as in the first episode).
function episode.restore(area)
	local vm = core.get_voxel_manip(area.minp, area.maxp)
	vm:set_data(area.data)
	vm:set_param2_data(area.param2)
	vm:set_light_data(area.light)
	vm:write_to_map(false)
	for _, pos in ipairs(core.find_nodes_with_meta(area.minp, area.maxp)) do
		core.get_meta(pos):from_table(nil)
	end
	for _, m in ipairs(area.meta) do
		core.get_meta(m.pos):from_table(m.fields)
	end
	for _, pos in ipairs(core.find_nodes_in_area(area.minp, area.maxp, nodes_with_timers())) do
		core.get_node_timer(pos):stop()
	end
	for _, t in ipairs(area.timers) do
		core.get_node_timer(t.pos):set(t.timeout, t.elapsed)
	end
end

--- Keep the area's map blocks active all the time: what runs in them (node
--- timers, ABMs, entities) must not depend on where agents were before.
function episode.forceload(area)
	local minb = vector.apply(area.minp / 16, math.floor)
	local maxb = vector.apply(area.maxp / 16, math.floor)
	for x = minb.x, maxb.x do
		for y = minb.y, maxb.y do
			for z = minb.z, maxb.z do
				if not core.forceload_block(vector.new(x, y, z) * 16, true, -1) then
					error("craftium_ma: cannot keep the task area's block (" .. x .. ", " ..
						y .. ", " .. z .. ") loaded")
				end
			end
		end
	end
end

return episode
