"""The SDK's view properties, one module each as the SDK keeps them. Each is a function
(view, context) -> the ids to drop; `enforcing` applies them in the SDK's order."""
