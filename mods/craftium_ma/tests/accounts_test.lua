local t = ...
local accounts = t.load("accounts")

t.test("parse keeps the names in order and each one's password", function()
	local names, passwords = accounts.parse("agent_1:b0b,agent_0:a:1")
	t.eq(names, {"agent_1", "agent_0"})
	t.eq(passwords, {agent_1 = "b0b", agent_0 = "a:1"})
end)

t.test("parse of an empty setting gives no logins", function()
	local names, passwords = accounts.parse("")
	t.eq(names, {})
	t.eq(passwords, {})
end)

t.test("a login without a password is an error naming it", function()
	t.raises(function() accounts.parse("agent_0:x,alice") end,
		"a login must read name:password, got 'alice'")
end)
