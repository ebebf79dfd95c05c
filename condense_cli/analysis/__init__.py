"""What a log's history says: the facts of events, what condensations lost, view diffs."""
