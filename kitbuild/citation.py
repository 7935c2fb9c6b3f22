"""CITATION.cff and the kit's BibTeX: how to cite a kit, from its provenance.json alone.

A kit whose kit.yaml names ``authors`` gets a CITATION.cff (Citation File Format 1.2.0), which
GitHub, Zenodo and reference managers read; the README's "How to cite" section and croissant.json's
``citeAs`` print the same reference as BibTeX. Both are written from provenance.json, so verify
writes them again from the kit and compares bytes.

CITATION.cff is YAML, written here line by line with every value a JSON string (YAML reads JSON
strings as they are): the same provenance.json gives the same bytes whatever YAML library is
installed.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import orjson

CFF_VERSION = "1.2.0"
# A licence CITATION.cff may name is an SPDX identifier; any other text is left out of the file.
_SPDX = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")


def _q(text: str) -> str:
    return orjson.dumps(text).decode("utf-8")


def authors(provenance: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """kit.yaml's authors as provenance.json records them (none for a kit without them)."""
    found = provenance.get("authors")
    return [a for a in found if isinstance(a, Mapping)] if isinstance(found, list) else []


def display_name(author: Mapping[str, Any]) -> str:
    """'Given Family' for a person, the name of an organisation."""
    if "name" in author:
        return str(author["name"])
    return f"{author.get('given', '')} {author.get('family', '')}".strip()


def citation_cff(provenance: Mapping[str, Any]) -> bytes | None:
    """CITATION.cff for the kit, or None when provenance.json names no authors."""
    people = authors(provenance)
    if not people or not provenance.get("title"):
        return None
    lines = [
        f"cff-version: {CFF_VERSION}",
        f"message: {_q('If you use this data kit, please cite it as below.')}",
        "type: dataset",
        f"title: {_q(str(provenance['title']))}",
        "authors:",
    ]
    for author in people:
        if "name" in author:
            keys = [("name", author["name"])]
        else:
            keys = [("family-names", author.get("family", "")), ("given-names", author.get("given", ""))]
        keys += [(cff_key, author[key]) for key, cff_key in (("affiliation", "affiliation"), ("orcid", "orcid")) if key in author]
        for n, (key, value) in enumerate(keys):
            lines.append(f"  {'- ' if n == 0 else '  '}{key}: {_q(str(value))}")
    if provenance.get("version"):
        lines.append(f"version: {_q(str(provenance['version']))}")
    lines.append(f"date-released: {_q(str(provenance['date']))}")
    licence = provenance.get("licence")
    if isinstance(licence, str) and _SPDX.fullmatch(licence):
        lines.append(f"license: {_q(licence)}")
    if provenance.get("url"):
        lines.append(f"url: {_q(str(provenance['url']))}")
    lines.append(f"identifiers:\n  - type: other\n    value: {_q(str(provenance['kit']))}\n    description: {_q('The name of the kit, as its index.json and provenance.json give it.')}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _bib(text: str) -> str:
    """A BibTeX field's text: its braces and backslashes escaped, so the entry stays balanced."""
    return re.sub(r"([{}\\])", r"\\\1", text)


def bibtex(provenance: Mapping[str, Any]) -> str:
    """The kit as one BibTeX @misc entry: croissant.json's citeAs and the README's reference."""
    key = re.sub(r"[^A-Za-z0-9_-]", "-", str(provenance.get("kit", "kit")))
    people = authors(provenance)
    fields = [("title", str(provenance.get("title", "")))]
    if people:
        # A person as 'Family, Given'; an organisation in braces, so BibTeX keeps its name whole.
        names = ["{" + _bib(str(a["name"])) + "}" if "name" in a else f"{_bib(str(a.get('family', '')))}, {_bib(str(a.get('given', '')))}" for a in people]
        fields.append(("author", " and ".join(names)))
    date = str(provenance.get("date", ""))
    fields.append(("year", date[:4]))
    if provenance.get("version"):
        fields.append(("version", str(provenance["version"])))
    if provenance.get("url"):
        fields.append(("url", str(provenance["url"])))
    # The authors in quotes: an organisation's braces then never meet the field's own.
    body = ",\n".join(f'  {name} = "{value}"' if name == "author" else f"  {name} = {{{_bib(value)}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}"
