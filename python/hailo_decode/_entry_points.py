"""Entry points that a lower module offers and a higher one implements.

`DecoderConfig.from_hef` lives on the ground floor (config) but its work needs the HEF reader, and
`Decoder.decode_vstreams` lives in decoder but its work needs the HailoRT adapters. Importing those
from below would make the package's imports run in a circle, so the implementing module binds its
function here when it is imported (hailo_decode/__init__ imports every one of them) and the entry
point looks it up. This module imports nothing of the package.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

_BOUND: Dict[str, Callable[..., Any]] = {}


def bind(name: str, fn: Callable[..., Any]) -> None:
    """Called by the implementing module at import: `bind("config.from_hef", config_from_hef)`."""
    _BOUND[name] = fn


def lookup(name: str) -> Callable[..., Any]:
    try:
        return _BOUND[name]
    except KeyError:
        raise RuntimeError(f"{name} is not available: its module was not imported (import hailo_decode, "
                           f"which imports every implementing module)") from None
