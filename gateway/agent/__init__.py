"""The agent: frozen system prompt, the turn's tool loop, chat commands."""
