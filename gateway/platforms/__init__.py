"""Chat platforms: a small adapter interface, one package per platform, one registry."""
