-- Arguments of the API: which player a player argument names, and the checks
-- that turn a wrong argument into an error naming it. Pure Lua (tests/).
--
-- Errors blame the task's line that called the API: the checks raise at level
-- 3, the caller of the API function that called the check.

local checks = {}

--- The name a player argument stands for: a name as it is, an ObjectRef's
--- player name ("" for an object that is no player), nil for anything else.
function checks.player_name(player)
	if type(player) == "string" then
		return player
	end
	local kind = type(player)
	if (kind == "userdata" or kind == "table") and player.get_player_name then
		return player:get_player_name()
	end
	return nil
end

function checks.reward(fn, reward)
	if type(reward) ~= "number" or reward ~= reward then
		error("craftium_ma." .. fn .. ": the reward must be a number, got " ..
			(reward ~= reward and "nan" or type(reward) .. " " .. tostring(reward)), 3)
	end
end

function checks.callback(fn, value)
	if type(value) ~= "function" then
		error("craftium_ma." .. fn .. ": give a function, got " .. type(value), 3)
	end
end

--- An info value: a number, string, boolean or flat array of numbers.
function checks.info(key, value)
	if type(key) ~= "string" then
		error("craftium_ma.set_info: the key must be a string, got " .. type(key), 3)
	end
	local kind = type(value)
	if kind == "table" then
		for i, v in pairs(value) do
			if type(i) ~= "number" or type(v) ~= "number" then
				error("craftium_ma.set_info: '" .. key .. "' must be a flat array of numbers, " ..
					"got a table with the " .. type(i) .. " key " .. tostring(i) .. " holding a " ..
					type(v), 3)
			end
		end
	elseif kind ~= "number" and kind ~= "string" and kind ~= "boolean" then
		error("craftium_ma.set_info: '" .. key .. "' must be a number, string, boolean or " ..
			"flat array of numbers, got " .. kind, 3)
	end
end

function checks.position(fn, pos)
	if type(pos) ~= "table" or type(pos.x) ~= "number" or type(pos.y) ~= "number" or
			type(pos.z) ~= "number" then
		error("craftium_ma." .. fn .. ": pos must be a position {x = ..., y = ..., z = ...}, got " ..
			(type(pos) == "table" and "a table without numbers x, y, z" or type(pos)), 3)
	end
end

--- An error about what the task's function fn returned, blaming the line that defines fn.
function checks.returned(fn, message)
	local defined = debug.getinfo(fn, "S")
	error(defined.short_src .. ":" .. defined.linedefined .. ": craftium_ma: " .. message, 0)
end

return checks
