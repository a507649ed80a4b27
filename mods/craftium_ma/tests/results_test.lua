local t = ...

local function new_results()
	return t.load("results", {agents = {"agent_0", "agent_1"}, checks = t.load("checks")})
end

t.test("rewards accumulate within a step and start at 0 after take", function()
	local results = new_results()
	results.add_reward("agent_0", 1)
	results.add_reward(t.fake_player("agent_0"), 0.5)
	results.set_reward("agent_1", -2)
	local taken = results.take()
	t.eq(taken.agent_0.reward, 1.5)
	t.eq(taken.agent_1.reward, -2)
	t.eq(results.take().agent_0, {reward = 0, terminated = false, truncated = false, info = {}})
end)

t.test("end_episode terminates every agent; set_truncation only the one named", function()
	local results = new_results()
	results.set_truncation("agent_1")
	local taken = results.take()
	t.eq({taken.agent_0.truncated, taken.agent_1.truncated}, {false, true})
	results.end_episode()
	taken = results.take()
	t.eq({taken.agent_0.terminated, taken.agent_1.terminated}, {true, true})
end)

t.test("set_info keeps the value under its key for this step", function()
	local results = new_results()
	results.set_info("agent_0", "seen", {1, 2})
	t.eq(results.take().agent_0.info, {seen = {1, 2}})
end)

t.test("an unknown agent is an error that lists the agents and blames the caller", function()
	local results = new_results()
	local message = t.raises(function() results.add_reward("agent_9", 1) end,
		"craftium_ma: unknown agent 'agent_9'; the agents are agent_0, agent_1")
	t.eq(message:match("^[^:]*results_test%.lua:%d+:") ~= nil, true)
	t.raises(function() results.set_termination(7) end, "unknown agent '7'")
end)

t.test("is_agent knows the agents by name and ObjectRef only", function()
	local results = new_results()
	t.eq(results.is_agent("agent_1"), true)
	t.eq(results.is_agent(t.fake_player("agent_0")), true)
	t.eq(results.is_agent("alice"), false)
	t.eq(results.is_agent(nil), false)
end)

t.test("agents returns a copy of the names in order", function()
	local results = new_results()
	local names = results.agents()
	names[1] = "changed"
	t.eq(results.agents(), {"agent_0", "agent_1"})
end)
