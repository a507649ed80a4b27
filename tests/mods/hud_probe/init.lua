-- Loaded beside a task by tests/test_hud.py. Its reset hook runs after the task's
-- (it is registered once every mod has loaded) and, by the reset option hud_probe:
--   "all"       shows every HUD part and the name tags
--   "part,..."  shows exactly these parts, and name tags only if "nametags" is
--               one of them (what a manifest asks; then it leaves them as they are)
-- and does nothing without the option.
local PARTS = {"hotbar", "healthbar", "breathbar", "crosshair", "wielditem"}

core.register_on_mods_loaded(function()
	craftium_ma.register_on_reset(function(_, options)
		local probe = options.hud_probe
		if not probe then
			return
		end
		local flags = {}
		for _, part in ipairs(PARTS) do
			flags[part] = probe == "all" or ("," .. probe .. ","):find("," .. part .. ",", 1, true) ~= nil
		end
		local nametags = ("," .. probe .. ","):find(",nametags,", 1, true)
		for _, player in ipairs(craftium_ma.agent_players()) do
			player:hud_set_flags(flags)
			if probe == "all" or not nametags then
				local alpha = probe == "all" and 255 or 0
				player:set_nametag_attributes({color = {a = alpha, r = 255, g = 255, b = 255},
					bgcolor = {a = alpha, r = 0, g = 0, b = 0}})
			end
		end
	end)
end)
