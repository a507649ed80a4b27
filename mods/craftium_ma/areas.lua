-- The task's areas: generated when the server starts, built by the task, then
-- kept as a snapshot (nodes, light, metadata, node timers) that every reset
-- writes back, so that each episode starts from the same world.
--
-- deps.send_margin: how far (nodes) beyond an area a client can be sent blocks.

local deps = ...
local areas = {}

local registered = {}  -- {minp, maxp, on_loaded, loaded, and the snapshot}

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

-- The area's nodes (with their light), metadata and running node timers.
local function snapshot(area)
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

-- Write the snapshot back: nodes, light, metadata and node timers as they were
-- (light too: the task's changes update it from there, as in the first episode).
local function restore(area)
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

-- Keep the area's map blocks active all the time: what runs in them (node
-- timers, ABMs, entities) must not depend on where agents were before.
local function forceload(area)
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

--- The task's world lives in minp..maxp: the server generates it at start and
--- calls on_loaded() (build the arena there), then keeps a snapshot of it (nodes,
--- metadata, node timers) and keeps its map blocks active. Every reset writes the
--- snapshot back before the reset callbacks run; resets wait until the areas are
--- loaded.
function areas.register_area(minp, maxp, on_loaded)
	registered[#registered + 1] = {minp = vector.new(minp), maxp = vector.new(maxp),
		on_loaded = on_loaded, loaded = false}
end

--- Whether every area is generated, built and kept.
function areas.loaded()
	for _, area in ipairs(registered) do
		if not area.loaded then
			return false
		end
	end
	return true
end

--- Write every area's snapshot back.
function areas.restore_all()
	for _, area in ipairs(registered) do
		restore(area)
	end
end

-- Everything a client can be sent from inside an area is generated at the start
-- too: blocks generated on demand would reach clients whenever the emerge thread
-- finished them, and the same seed would not always give the same frames.
core.register_on_mods_loaded(function()
	core.after(0, function()
		local margin = vector.new(deps.send_margin, deps.send_margin, deps.send_margin)
		for _, area in ipairs(registered) do
			core.emerge_area(area.minp - margin, area.maxp + margin, function(_, _, remaining)
				if remaining == 0 then
					if area.on_loaded then
						area.on_loaded()
					end
					forceload(area)
					snapshot(area)
					area.loaded = true
				end
			end)
		end
	end)
end)

return areas
