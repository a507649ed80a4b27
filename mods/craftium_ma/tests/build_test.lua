local t = ...
local build = t.load("build")

local function arena(def)
	local nodes = {}
	build.arena_nodes(def, function(pos, name)
		nodes[#nodes + 1] = pos.x .. "," .. pos.y .. "," .. pos.z .. "=" .. name
	end)
	return nodes
end

t.test("an arena is set column by column: the floor, then walls or air upwards", function()
	local nodes = arena({minp = {x = 0, y = 0, z = 0}, maxp = {x = 2, y = 2, z = 2},
		floor = "F", wall = "W", wall_height = 1})
	t.eq(#nodes, 27)
	t.eq({nodes[1], nodes[2], nodes[3], nodes[4]}, {"0,0,0=F", "0,1,0=W", "0,2,0=air", "0,0,1=F"})
	-- the middle column has no wall
	t.eq({nodes[13], nodes[14], nodes[15]}, {"1,0,1=F", "1,1,1=air", "1,2,1=air"})
end)

t.test("walls reach maxp.y by default; inner walls and a floor function are followed", function()
	local nodes = arena({minp = {x = 0, y = 5, z = 0}, maxp = {x = 2, y = 6, z = 3},
		floor = function(x, z, wall) return wall and "B" or "F" .. z end, wall = "W",
		inner_wall = function(_, z) return z == 2 end})
	t.eq({nodes[1], nodes[2]}, {"0,5,0=B", "0,6,0=W"})
	t.eq({nodes[11], nodes[12], nodes[13], nodes[14]}, {"1,5,1=F1", "1,6,1=air", "1,5,2=B", "1,6,2=W"})
end)

t.test("walled_arena without corners, floor or wall is an error naming what is wrong", function()
	t.raises(function() build.walled_arena({floor = "F", wall = "W"}) end,
		"craftium_ma.walled_arena: give {minp = ..., maxp = ..., floor = ..., wall = ...}, " ..
		"got no minp or maxp")
	local corners = {minp = {x = 0, y = 0, z = 0}, maxp = {x = 1, y = 1, z = 1}}
	t.raises(function() build.walled_arena({minp = corners.minp, maxp = corners.maxp, wall = "W"}) end,
		"craftium_ma.walled_arena: floor must be a node name or a function, got nil")
	t.raises(function() build.walled_arena({minp = corners.minp, maxp = corners.maxp, floor = "F",
		wall = function() end}) end, "craftium_ma.walled_arena: wall must be a node name, got function")
end)

-- A stand-in for Luanti's VoxelManip over the box 0..3 on every axis, x fastest.
local function fake_engine(names)
	local data, written = {}, {}
	for i = 1, 64 do
		data[i] = 1
	end
	local ids = {}
	for id, name in ipairs(names) do
		ids[name] = id
	end
	local function index(x, y, z) return z * 16 + y * 4 + x + 1 end
	local vm = {
		get_emerged_area = function() return {x = 0, y = 0, z = 0}, {x = 3, y = 3, z = 3} end,
		get_data = function() return data end,
		set_data = function(_, d) written.data = d end,
		write_to_map = function(_, light) written.light = light end,
	}
	_G.core = {
		get_voxel_manip = function() return vm end,
		get_content_id = function(name) return assert(ids[name], name) end,
		get_name_from_content_id = function(id) return names[id] end,
	}
	_G.VoxelArea = {new = function() return {
		index = function(_, x, y, z) return index(x, y, z) end,
		iterp = function(_, p1, p2)
			local list = {}
			for z = p1.z, p2.z do for y = p1.y, p2.y do for x = p1.x, p2.x do
				list[#list + 1] = index(x, y, z)
			end end end
			local i = 0
			return function() i = i + 1 return list[i] end
		end,
	} end}
	return written, index
end

t.test("edit_nodes reads, sets and fills nodes and writes them in one pass", function()
	local written, index = fake_engine({"air", "stone", "torch"})
	local before
	build.edit_nodes({x = 0, y = 0, z = 0}, {x = 3, y = 3, z = 3}, function(nodes)
		nodes.fill({x = 0, y = 0, z = 0}, {x = 3, y = 1, z = 3}, "stone")
		before = nodes.get(1, 1, 1)
		nodes.set(1, 1, 1, "torch")
	end)
	t.eq(before, "stone")
	t.eq({written.data[index(1, 1, 1)], written.data[index(2, 1, 2)], written.data[index(2, 2, 2)]},
		{3, 2, 1})
	t.eq(written.light, true)
	build.edit_nodes({x = 0, y = 0, z = 0}, {x = 1, y = 1, z = 1}, function() end, false)
	t.eq(written.light, false)
end)
