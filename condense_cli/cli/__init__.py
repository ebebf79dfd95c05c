"""The command line: the typer app and one module per command, thin over the layers below."""
