"""The model: the litellm client (imported only when a model is called) and token counts."""
