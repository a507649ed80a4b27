-- The agents' HUD: the parts the manifest switches on (task.toml's hud,
-- nametags), every other part off; applied at every reset, before the task's
-- reset callbacks. Python sends the parts in server settings
-- (Task.bridge_settings()). hud.flags is pure Lua (tests/).
--
-- deps.parts: every HUD part, comma-separated; deps.shown: the parts shown, or
-- nil in a session without a manifest (the engine tests: Luanti's defaults);
-- deps.nametags: whether agents see each other's name tags.

local deps = ...
local hud = {}

local function split(list)
	local out = {}
	for part in list:gmatch("[^,]+") do
		out[#out + 1] = part
	end
	return out
end

--- The hud_set_flags table: the parts in `shown` on, every other of `parts` off.
function hud.flags(parts, shown)
	local flags = {}
	for _, part in ipairs(parts) do
		flags[part] = false
	end
	for _, part in ipairs(shown) do
		flags[part] = true
	end
	return flags
end

local flags
if deps.shown then
	if not deps.parts then
		error("craftium_ma: the server setting craftium_ma_hud_parts is missing " ..
			"(Task.bridge_settings() sends it with craftium_ma_hud)")
	end
	flags = hud.flags(split(deps.parts), split(deps.shown))
end

local HIDDEN = {a = 0, r = 0, g = 0, b = 0}

--- Show each player the manifest's HUD parts and name tags.
function hud.apply(players)
	if not flags then
		return
	end
	for _, player in ipairs(players) do
		player:hud_set_flags(flags)
		if not deps.nametags then
			player:set_nametag_attributes({color = HIDDEN, bgcolor = HIDDEN})
		end
	end
end

return hud
