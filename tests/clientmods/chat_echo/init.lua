-- The human test client's chat (tests/test_chat.py): every chat line received
-- goes to the client's log, and agent_0's "echo TEXT" is answered in-game.
core.register_on_receiving_chat_message(function(message)
	core.log("action", "chat_echo heard: " .. message)
	local text = message:match("^<agent_0> echo (.+)$")
	if text then
		core.send_chat_message("@agent_1 " .. text)
	end
end)
