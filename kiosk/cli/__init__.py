"""The command line, a module per command group; `kiosk/__main__.py` parses and dispatches."""
