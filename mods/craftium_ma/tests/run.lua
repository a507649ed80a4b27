-- Runs the bridge's Lua unit tests outside the engine (tests/test_lua.py):
--   luajit mods/craftium_ma/tests/run.lua mods/craftium_ma/tests/results_test.lua ...
-- A test file is a chunk called with this runner's helpers; it registers its
-- tests with t.test(sentence, fn). Prints one line per test; exits 1 if any failed.

local bridge = arg[0]:match("^(.*)/tests/run%.lua$") or "."

-- Luanti's additions to Lua's libraries that the pure modules use.
function table.copy(t)
	local out = {}
	for k, v in pairs(t) do
		out[k] = type(v) == "table" and table.copy(v) or v
	end
	return out
end

local t = {}
local tests = {}  -- {name, fn} in registration order

function t.test(name, fn)
	tests[#tests + 1] = {name = name, fn = fn}
end

--- The bridge's module `name`.lua, loaded afresh with its deps (as init.lua does).
function t.load(name, deps)
	return assert(loadfile(bridge .. "/" .. name .. ".lua"))(deps or {})
end

local function show(v)
	if type(v) ~= "table" then
		return type(v) == "string" and string.format("%q", v) or tostring(v)
	end
	local keys = {}
	for k in pairs(v) do
		keys[#keys + 1] = k
	end
	table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
	local parts = {}
	for _, k in ipairs(keys) do
		parts[#parts + 1] = "[" .. show(k) .. "] = " .. show(v[k])
	end
	return "{" .. table.concat(parts, ", ") .. "}"
end

--- a equals b, tables compared by their contents.
function t.eq(a, b)
	if show(a) ~= show(b) then
		error("expected " .. show(b) .. ", got " .. show(a), 2)
	end
end

--- fn() raises an error whose message contains `text` (plain text).
function t.raises(fn, text)
	local ok, message = pcall(fn)
	if ok then
		error("expected an error containing '" .. text .. "', got none", 2)
	end
	if not tostring(message):find(text, 1, true) then
		error("expected an error containing '" .. text .. "', got '" .. tostring(message) .. "'", 2)
	end
	return message
end

--- A stand-in for Luanti's PcgRandom: next(a, b) cycles through `values`,
--- clamped into a..b, and records every call.
function t.fake_rng(values)
	local rng, i = {calls = {}}, 0
	function rng:next(a, b)
		i = i % #values + 1
		self.calls[#self.calls + 1] = {a, b}
		return math.max(a, math.min(b, values[i]))
	end
	return rng
end

--- A stand-in for a player's ObjectRef.
function t.fake_player(name, fields)
	local p = {name = name, pos = {x = 0, y = 0, z = 0}, yaw = 0, pitch = 0, hp = 20}
	for k, v in pairs(fields or {}) do
		p[k] = v
	end
	function p:get_player_name() return self.name end
	function p:get_pos() return {x = self.pos.x, y = self.pos.y, z = self.pos.z} end
	function p:get_look_horizontal() return self.yaw end
	function p:get_look_vertical() return self.pitch end
	function p:get_hp() return self.hp end
	return p
end

local failed = 0
for _, file in ipairs(arg) do
	tests = {}
	assert(loadfile(file))(t)
	if #tests == 0 then
		failed = failed + 1
		print("FAIL " .. file .. ": registers no tests")
	end
	for _, test in ipairs(tests) do
		core, VoxelArea = nil, nil  -- a test's stand-ins for the engine end with it
		local ok, message = xpcall(test.fn, debug.traceback)
		if ok then
			print("ok   " .. file .. ": " .. test.name)
		else
			failed = failed + 1
			print("FAIL " .. file .. ": " .. test.name .. "\n" .. message)
		end
	end
end
os.exit(failed == 0 and 0 or 1)
