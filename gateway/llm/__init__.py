"""OpenAI-compatible chat-completions client (main and auxiliary model)."""
