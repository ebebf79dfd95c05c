"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`)."""
