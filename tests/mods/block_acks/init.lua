-- block_acks: a stone floor in map block (0, 0, 0). Every third step four far nodes
-- change (four changes in a tick: the server sends the block anew to a player more than
-- 5 nodes away, a tick later); two steps later the node in front of agent_0 changes
-- (one change: sent as a node change if the client acknowledged the block by then, else
-- as the block, a tick later).

local MINP, MAXP = {x = 0, y = 0, z = 0}, {x = 15, y = 0, z = 15}
local NEAR = {x = 2, y = 1, z = 5}
local FAR = {{x = 12, y = 1, z = 12}, {x = 13, y = 1, z = 12}, {x = 12, y = 1, z = 13},
	{x = 13, y = 1, z = 13}}

craftium_ma.register_area(MINP, MAXP, function()
	craftium_ma.edit_nodes(MINP, MAXP, function(nodes) nodes.fill(MINP, MAXP, "default:stone") end)
end)

local function toggle(pos, name)
	core.set_node(pos, {name = core.get_node(pos).name == name and "air" or name})
end

craftium_ma.register_on_reset(function()
	core.set_timeofday(0.5)
	core.set_node(NEAR, {name = "air"})
	for _, pos in ipairs(FAR) do
		core.set_node(pos, {name = "air"})
	end
	craftium_ma.spawn(craftium_ma.agent_players()[1], {x = 2, y = 0.5, z = 2}, 0, 20)
end)

craftium_ma.register_on_step(function()
	local step = craftium_ma.step_count()
	if step % 3 == 0 then
		for _, pos in ipairs(FAR) do
			toggle(pos, "default:stone")
		end
	elseif step % 3 == 2 then
		toggle(NEAR, "default:mese")
	end
end)
