-- luacheck configuration for the Lua mods (mods/, tests/mods/): Luanti 5.10 runs
-- them in LuaJIT, with the engine's globals below. tests/test_lua.py runs
-- `luacheck mods/ tests/mods/` and expects it clean.

std = "luajit"
max_line_length = 100
-- Engine callbacks and the task API have fixed signatures: unused arguments are normal.
unused_args = false

-- The engine's globals: read-only but for the callbacks a mod may override.
read_globals = {
	core = {other_fields = true, fields = {
		-- hooks the patched server calls, set by the bridge (mods/craftium_ma/init.lua)
		craftium_ma_reset = {read_only = false},
		craftium_ma_tick = {read_only = false},
		-- builtin behaviour a task may replace
		show_death_screen = {read_only = false},
		is_protected = {read_only = false},
	}},
	"minetest",
	"vector",
	"VoxelArea",
	"PcgRandom",
	"PseudoRandom",
	"ItemStack",
	"dump",
	"dump2",
	"player_api",  -- minetest_game's player animations
	table = {fields = {"copy", "indexof", "insert_all", "key_value_swap", "shuffle"}},
	string = {fields = {"split", "trim"}},
	math = {fields = {"hypot", "sign", "factorial", "round"}},
	-- the bridge's API, for the task mods
	"craftium_ma",
}

-- The bridge defines its API table.
files["mods/craftium_ma/init.lua"] = {globals = {"craftium_ma"}}
-- The bridge's Lua tests run outside the engine and stand in for it.
files["mods/craftium_ma/tests/"] = {globals = {"core", "VoxelArea", "table"}}
-- Generated from the Python (craftium_ma/xland/world.py): one table a line.
files["mods/xland/constants.lua"] = {max_line_length = false}
