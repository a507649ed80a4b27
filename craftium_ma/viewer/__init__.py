"""The live web viewer of a Runner (the optional extra craftium-ma[viewer])."""

from .app import create_app

__all__ = ["create_app"]
