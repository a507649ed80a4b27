-- Accounts: who may join the server, and with which password. The launcher
-- makes a password for every agent and human of the env and passes them in
-- server settings as "name:password,...".

local accounts = {}

--- "name:password,..." as the names in order and a name -> password table.
function accounts.parse(text)
	local names, passwords = {}, {}
	for entry in text:gmatch("[^,]+") do
		local name, password = entry:match("^([^:]+):(.*)$")
		if not name then
			error("craftium_ma: a login must read name:password, got '" .. entry .. "'", 2)
		end
		names[#names + 1] = name
		passwords[name] = password
	end
	return names, passwords
end

--- Only the players password_of(name) knows join, each with its password (anyone
--- else too when spectators are allowed). The account is (re)written just before
--- its login is checked, so the server authenticates it against that password;
--- then on_admitted(name) runs.
function accounts.admit_only(password_of, allow_spectators, on_admitted)
	core.register_on_prejoinplayer(function(name)
		local password = password_of(name)
		if not password then
			if not allow_spectators then
				return "craftium-ma: only the configured agents and humans may join this server"
			end
			return
		end
		local auth = core.get_auth_handler()
		local hash = core.get_password_hash(name, password)
		if auth.get_auth(name) then
			auth.set_password(name, hash)
		else
			auth.create_auth(name, hash)
		end
		on_admitted(name)
	end)
end

return accounts
