"""The tool's name and version, as provenance.json records them."""

TOOL_NAME = "kitbuild"
__version__ = "0.3.1"
