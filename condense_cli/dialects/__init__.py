"""Log formats ("dialects"): each reads, replays and appends to one kind of agent log."""
