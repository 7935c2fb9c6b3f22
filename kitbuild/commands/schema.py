"""``kitbuild schema NAME``: the JSON Schemas kitbuild validates against, for editors and CI.

The schemas ship as data files in ``kitbuild/schemas/``; this prints one exactly as shipped, so
``kitbuild schema config > kit.schema.json`` gives an editor the same schema the loader uses.
"""

from __future__ import annotations

from kitbuild.errors import KitbuildError
from kitbuild.resources import schema_path

# What each published schema describes; the names users type.
SCHEMAS = {
    "config": "kit.yaml, the kit config",
    "index": "a kit's index.json",
    "provenance": "a kit's provenance.json",
    "report": "the JSON document build, verify and check print with --format json",
    "rule": "a rule file, built in or your own",
}


def schema_bytes(name: str) -> bytes:
    """The schema ``name`` as shipped; raises :class:`KitbuildError` (exit 2) for an unknown or missing one."""
    if name not in SCHEMAS:
        raise KitbuildError(f"no schema named {name!r}; the schemas are: {', '.join(SCHEMAS)}.")
    path = schema_path(name)
    if not path.is_file():
        raise KitbuildError(f"the {name} schema ({SCHEMAS[name]}) does not ship with this version of kitbuild.")
    return path.read_bytes()
