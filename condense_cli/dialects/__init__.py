"""Log formats ("dialects") that `condense` reads, one module each."""
