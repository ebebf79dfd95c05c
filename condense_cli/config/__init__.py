"""config.toml in, the configured condenser out (OpenHands' config files read as they are)."""
