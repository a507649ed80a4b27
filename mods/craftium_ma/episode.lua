-- What every reset clears before the task's reset callbacks run, so that an
-- episode plays as it would in a fresh env, whatever the env ran before
-- (docs/environments.md, "Clean episodes"). The engine restarts its own timers
-- and random numbers and has each client start over (engine patches 0010, 0011);
-- this part is the Lua-visible state of players and objects; areas.lua restores
-- the task's areas.

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

return episode
