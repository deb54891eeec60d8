"""Session history in state.db: sessions, messages, full-text search."""
