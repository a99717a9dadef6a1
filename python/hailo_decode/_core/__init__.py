"""The C++ core as the package sees it: everything the extension module `_native`
(cpp/bindings/module.cpp, types in _native.pyi) defines.

The extension sits in this package, not beside the package's modules, so that the import graph
(import-linter, pyproject.toml) sees `hailo_decode._core` as the ground floor it is: an import of
a compiled module it cannot read would count as an import of the whole package instead.
"""

from ._native import *  # noqa: F403  (every binding; the names are the extension's, see _native.pyi)
