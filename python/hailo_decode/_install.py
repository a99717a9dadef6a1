"""The pip command that adds an optional extra to this installation, worded for where hailo-decode
was installed from. From a package index: `pip install "hailo-decode[coco]"`. From a source
checkout, a wheel file or a Git URL (no index knows that build): the extra's own requirements,
`pip install "pycocotools>=2.0.6"`, which add the missing package next to the installed one
without rebuilding it. Standard library only: any layer may use it."""

from __future__ import annotations

import json
import re
from importlib import metadata
from typing import List, Optional

__all__ = ["install_hint"]

DISTRIBUTION = "hailo-decode"


def _distribution() -> Optional[metadata.Distribution]:
    try:
        return metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def _from_an_index(dist: metadata.Distribution) -> bool:
    """pip records where a package came from when it was not an index (PEP 610: direct_url.json)."""
    text = dist.read_text("direct_url.json")
    if not text:
        return True
    try:
        return not json.loads(text).get("url")
    except (ValueError, AttributeError):
        return True


def _extra_requirements(dist: metadata.Distribution, extra: str) -> List[str]:
    reqs = []
    for line in dist.requires or ():
        spec, _, marker = line.partition(";")
        if re.search(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""", marker):
            reqs.append(spec.strip())
    return reqs


def install_hint(extra: str) -> str:
    """`pip install ...` that brings the optional extra `extra` (coco, supervision, pictures, plot)
    to this installation."""
    dist = _distribution()
    if dist is None:  # imported from a source tree that was never installed
        return f'pip install ".[{extra}]" in the source checkout'
    if _from_an_index(dist):
        return f'pip install "{DISTRIBUTION}[{extra}]"'
    reqs = _extra_requirements(dist, extra)
    if not reqs:
        return f'pip install "{DISTRIBUTION}[{extra}]"'
    return "pip install " + " ".join(f'"{r}"' for r in reqs)
