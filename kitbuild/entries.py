"""index.json's entries as a build makes them: a listed file's path, size and sha256.

Their own module, apart from kitbuild.index: verify reads entries as dicts and never makes one,
and importing dataclasses (and inspect, which it imports) took 10 to 16 ms of verify's start,
before its workers fork. An entry stays a dataclass: orjson writes one as the object of its
fields, with no Python call per entry for a kit of 100,000 files.
"""

from __future__ import annotations

from dataclasses import dataclass

from kitbuild.mapped import hexdigest


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed file."""

    path: str
    size: int
    sha256: str

    @classmethod
    def from_bytes(cls, path: str, data: bytes) -> "Entry":
        return cls(path, len(data), hexdigest(data))

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256}
