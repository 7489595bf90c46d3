"""Test kit of the llama_server plugin: a scripted fake llama-server (loopback HTTP, the
endpoints the client uses) and the `llama_server` pytest fixture (a real server), which the
`atomic_agent_llama_server` pytest11 entry point installs."""
