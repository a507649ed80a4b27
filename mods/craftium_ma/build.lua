-- Building a task's world: a walled arena node by node, and any editing of an
-- area's nodes in one VoxelManip pass. build.arena_nodes is pure Lua (tests/).

local build = {}

--- Call put(pos, name) for every node of a walled arena, column by column
--- (x, then z, then y upwards); see build.walled_arena for `def`.
function build.arena_nodes(def, put)
	local minp, maxp = def.minp, def.maxp
	local top = minp.y + (def.wall_height or maxp.y - minp.y)
	for x = minp.x, maxp.x do
		for z = minp.z, maxp.z do
			local wall = x == minp.x or x == maxp.x or z == minp.z or z == maxp.z or
				(def.inner_wall ~= nil and def.inner_wall(x, z))
			local floor = def.floor
			if type(floor) == "function" then
				floor = floor(x, z, wall)
			end
			put({x = x, y = minp.y, z = z}, floor)
			for y = minp.y + 1, maxp.y do
				put({x = x, y = y, z = z}, wall and y <= top and def.wall or "air")
			end
		end
	end
end

local function check_arena(def)
	if type(def) ~= "table" or type(def.minp) ~= "table" or type(def.maxp) ~= "table" then
		error("craftium_ma.walled_arena: give {minp = ..., maxp = ..., floor = ..., wall = ...}, " ..
			"got " .. (type(def) == "table" and "no minp or maxp" or type(def)), 3)
	end
	for _, key in ipairs({"floor", "wall"}) do
		local kind = type(def[key])
		if kind ~= "string" and not (key == "floor" and kind == "function") then
			error("craftium_ma.walled_arena: " .. key .. " must be a node name" ..
				(key == "floor" and " or a function" or "") .. ", got " .. kind, 3)
		end
	end
end

--- Set the nodes of a walled arena with core.set_node, column by column (x,
--- then z, then y upwards). def.minp, def.maxp: its corners; the floor lies at
--- minp.y, the walls stand on the border (and where def.inner_wall(x, z) is
--- true), def.wall_height nodes high (default: up to maxp.y); every other node
--- above the floor up to maxp.y becomes air. def.floor: a node name, or
--- function(x, z, is_wall) returning one; def.wall: a node name.
function build.walled_arena(def)
	check_arena(def)
	build.arena_nodes(def, function(pos, name)
		core.set_node(pos, {name = name})
	end)
end

--- Edit the nodes of minp..maxp in one VoxelManip pass: edit(nodes) reads and
--- writes them with nodes.get(x, y, z) (a node name), nodes.set(x, y, z, name)
--- and nodes.fill(p1, p2, name) (every node of the box p1..p2); then they are
--- written to the map at once, the light computed anew unless calc_light is
--- false.
function build.edit_nodes(minp, maxp, edit, calc_light)
	local vm = core.get_voxel_manip(minp, maxp)
	local emin, emax = vm:get_emerged_area()
	local area = VoxelArea:new({MinEdge = emin, MaxEdge = emax})
	local data = vm:get_data()
	local ids = {}  -- node name -> content id
	local function id_of(name)
		ids[name] = ids[name] or core.get_content_id(name)
		return ids[name]
	end
	edit({
		get = function(x, y, z)
			return core.get_name_from_content_id(data[area:index(x, y, z)])
		end,
		set = function(x, y, z, name)
			data[area:index(x, y, z)] = id_of(name)
		end,
		fill = function(p1, p2, name)
			local id = id_of(name)
			for i in area:iterp(p1, p2) do
				data[i] = id
			end
		end,
	})
	vm:set_data(data)
	vm:write_to_map(calc_light ~= false)
end

return build
