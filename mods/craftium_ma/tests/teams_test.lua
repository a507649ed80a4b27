local t = ...

local function new_teams(rewards, scores)
	local agents = {"agent_0", "agent_1", "agent_2"}
	local is_agent = {agent_0 = true, agent_1 = true, agent_2 = true}
	return t.load("teams", {
		agents = function() return agents end,
		is_agent = function(name) return is_agent[name] == true end,
		is_human = function(name) return name == "alice" end,
		add_reward = function(name, r) rewards[name] = (rewards[name] or 0) + r end,
		add_human_reward = function(name, r) scores[name] = (scores[name] or 0) + r end,
		checks = t.load("checks"),
		declared = {"red", "blue"},
	})
end

t.test("split_teams without names deals the agents to the manifest's teams", function()
	local teams = new_teams({}, {})
	t.eq(teams.task_teams(), {"red", "blue"})
	teams.split_teams()
	t.eq(teams.team_members("red"), {"agent_0", "agent_2"})
	t.eq(teams.team_of("agent_1"), "blue")
end)

t.test("split_teams deals the agents out by turns", function()
	local teams = new_teams({}, {})
	teams.split_teams({"red", "blue"})
	t.eq(teams.team_members("red"), {"agent_0", "agent_2"})
	t.eq(teams.team_members("blue"), {"agent_1"})
	t.eq(teams.team_of("agent_1"), "blue")
	t.eq(teams.team_of(t.fake_player("agent_2")), "red")
	t.eq(teams.team_members("green"), {})
end)

t.test("a team reward goes to the agents' rewards and the humans' scores", function()
	local rewards, scores = {}, {}
	local teams = new_teams(rewards, scores)
	teams.set_teams({red = {"agent_0", "alice"}, blue = {"agent_1"}})
	teams.add_team_reward("red", 2)
	t.eq(rewards, {agent_0 = 2})
	t.eq(scores, {alice = 2})
end)

t.test("set_teams replaces the earlier teams", function()
	local teams = new_teams({}, {})
	teams.set_teams({red = {"agent_0"}})
	teams.set_teams({blue = {"agent_1"}})
	t.eq(teams.team_of("agent_0"), nil)
	t.raises(function() teams.add_team_reward("red", 1) end,
		"craftium_ma.add_team_reward: unknown team 'red'")
end)

t.test("a member who is neither agent nor human, or a reward not a number, is an error", function()
	local teams = new_teams({}, {})
	t.raises(function() teams.set_teams({red = {"agent_9"}}) end,
		"craftium_ma.set_teams: 'agent_9' is neither an agent nor a human of the env")
	teams.set_teams({red = {"agent_0"}})
	t.raises(function() teams.add_team_reward("red", "1") end,
		"craftium_ma.add_team_reward: the reward must be a number, got string")
end)
