"""Output for people and scripts: rendering, reports, consoles, the pager, progress."""
