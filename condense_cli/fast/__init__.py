"""Reading big logs fast: blocks of lines decoded at once, and walks in two processes."""
