"""The package version, in a module of its own so the widget can stamp it without importing the facade."""

__version__ = "0.1.0"
