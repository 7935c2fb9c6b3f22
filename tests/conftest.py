"""Registers the shared fixtures defined in tests/kittest.py."""

from kittest import make_files_fixture, write_kit_fixture, cli, bench  # noqa: F401
