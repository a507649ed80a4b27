local t = ...

t.test("flags switch the shown parts on and every other part off", function()
	local hud = t.load("hud")
	t.eq(hud.flags({"hotbar", "crosshair", "wielditem"}, {"crosshair"}),
		{hotbar = false, crosshair = true, wielditem = false})
end)

t.test("a manifest's parts without the list of all parts is an error naming the setting", function()
	t.raises(function() t.load("hud", {shown = "crosshair"}) end,
		"the server setting craftium_ma_hud_parts is missing")
end)

t.test("apply sets every player's flags and hides name tags unless asked for", function()
	local hud = t.load("hud", {parts = "hotbar,crosshair", shown = "hotbar", nametags = false})
	local seen = {}
	local player = {
		hud_set_flags = function(_, flags) seen.flags = flags end,
		set_nametag_attributes = function(_, a) seen.nametag_alpha = a.color.a end,
	}
	hud.apply({player})
	t.eq(seen, {flags = {hotbar = true, crosshair = false}, nametag_alpha = 0})
end)

t.test("without a manifest (no settings) apply leaves the players alone", function()
	local hud = t.load("hud", {nametags = false})
	hud.apply({{}})  -- a player without methods: any call would fail
end)
