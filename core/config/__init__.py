"""config.json, the state dir, `.env` and environment overrides."""
