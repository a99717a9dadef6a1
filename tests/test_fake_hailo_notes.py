"""The hailo_platform test double (tests/fake_hailo_platform) names, for every class and member, the
HailoRT source it mirrors: a double that cannot say where its behaviour comes from drifts into
being kinder than HailoRT.

The fixed form, anywhere in the docstring:
    HailoRT 4.23: <file>::<symbol>     file relative to hailort/libhailort/ in hailo-ai/hailort
                                       (branch hailo8), one of KNOWN_FILES (read for this double)
    Double only: <why>                 a helper or test-data member with no HailoRT counterpart;
                                       not allowed on public names of the mirrored modules
The HailoRT 5.2 double (tests/fake_hailo_platform_52) cites `HailoRT 5.2: <file>::<symbol>` (tag
v5.2.0) in its own modules. Every note of both doubles is checked against HailoRT's source when
it is at hand (../shared/hailort-src/v4.23.0 and v5.2.0, or $HAILO_DECODE_HAILORT_SRC): the file
exists and the symbol's last name occurs in it.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import types
from pathlib import Path

import pytest

from conftest import FAKE_ROOT, FAKE_ROOT_52

NOTE = re.compile(r"HailoRT 4\.23: (?P<file>[\w./-]+\.(?:py|cpp|hpp|h))::(?P<symbol>[A-Za-z_<][\w:.<>~]*)")
DOUBLE_ONLY = re.compile(r"Double only: \S")

# The HailoRT 4.23 files the double's notes may cite (each read for it, see the module docstrings).
KNOWN_FILES = {
    "bindings/python/platform/hailo_platform/__init__.py",
    "bindings/python/platform/hailo_platform/pyhailort/pyhailort.py",
    "bindings/python/src/pyhailort.cpp",
    "bindings/python/src/bindings_common.hpp",
    "bindings/python/src/utils.hpp",
    "bindings/python/src/infer_model_api.cpp",
    "bindings/python/src/network_group_api.cpp",
    "include/hailo/hailort.h",
    "include/hailo/hailort_common.hpp",
    "include/hailo/quantization.hpp",
    "src/net_flow/pipeline/infer_model.cpp",
    "src/net_flow/pipeline/async_infer_runner.cpp",
    "src/net_flow/pipeline/async_pipeline_builder.cpp",
    "src/net_flow/pipeline/configured_infer_model_hrpc_client.cpp",
    "src/transform/transform.cpp",
}
MODULES = ("hailo_platform", "hailo_platform.pyhailort.pyhailort", "hailo_platform.pyhailort._pyhailort",
           "hailo_platform._fake_device")
MIRRORED = MODULES[:3]  # public names here must cite HailoRT; _fake_device is test data

NOTE_52 = re.compile(r"HailoRT 5\.2: (?P<file>[\w./-]+\.(?:py|cpp|hpp|h))::(?P<symbol>[A-Za-z_<][\w:.<>~]*)")
# The HailoRT 5.2 files the 5.2 double's notes may cite (relative to hailort/libhailort at v5.2.0).
KNOWN_FILES_52 = {
    "bindings/python/platform/hailo_platform/pyhailort/pyhailort.py",
    "bindings/python/src/bindings_common.hpp",
    "../common/utils.hpp",
    "src/hef/layer_info.hpp",
    "src/net_flow/ops/nms_post_process.cpp",
    "src/net_flow/pipeline/async_pipeline_builder.cpp",
    "src/net_flow/pipeline/configured_infer_model_hrpc_client.cpp",
    "src/transform/transform.cpp",
}
MODULES_52 = ("hailo_platform", "hailo_platform._v52")  # the 5.2 double's own modules (the rest is the 4.23 double's)
HAILORT_SRC = Path(os.environ.get("HAILO_DECODE_HAILORT_SRC") or Path(__file__).resolve().parents[2] / "shared" / "hailort-src")
# Cited files the stored source copy lacks (read upstream with the search tools; see the notes).
NOT_IN_COPY = {("4.23", "bindings/python/platform/hailo_platform/__init__.py")}


def _members(module: types.ModuleType):
    """(qualified name, object) for every class, function, method and property defined in the
    module's own source: module level, and inside classes (nested classes too)."""
    src = inspect.getsourcefile(module)

    def own(obj) -> bool:
        fn = inspect.unwrap(obj.fget if isinstance(obj, property) else obj)
        if isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        if inspect.isclass(fn):
            return fn.__module__ == module.__name__
        code = getattr(fn, "__code__", None)
        return code is not None and code.co_filename == src  # not dataclass/enum-made methods

    def walk(prefix: str, ns, seen):
        for name, obj in list(vars(ns).items()):
            if name.startswith("__") and name.endswith("__") and name not in (
                    "__init__", "__enter__", "__exit__", "__iter__", "__repr__", "__int__", "__index__",
                    "__str__", "__post_init__"):
                continue
            target = obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj
            if not (inspect.isclass(target) or inspect.isfunction(target) or isinstance(target, property)):
                continue
            if not own(target):
                continue
            qual = f"{prefix}{name}"
            yield qual, target
            if inspect.isclass(target) and target not in seen:
                yield from walk(qual + ".", target, seen | {target})

    yield from walk("", module, frozenset())


def missing_notes(module: types.ModuleType, mirrored: bool, note: "re.Pattern[str]" = NOTE,
                  known: "set[str]" = KNOWN_FILES):
    """Members of `module` whose docstring has neither a HailoRT note nor (where allowed) 'Double
    only'. In the mirrored modules 'Double only' is allowed on private names (a leading underscore
    anywhere in the qualified name, dunders included), never on public ones: a public member the
    real package lacks would make the double kinder than HailoRT."""
    bad = []
    for qual, obj in _members(module):
        doc = inspect.getdoc(obj) or ""
        files = [m.group("file") for m in note.finditer(doc)]
        if files:
            unknown = [f for f in files if f not in known]
            if unknown:
                bad.append(f"{module.__name__}.{qual}: cites unknown file(s) {unknown}")
            continue
        public = not any(part.startswith("_") for part in qual.split("."))
        if DOUBLE_ONLY.search(doc) and not (mirrored and public):
            continue
        bad.append(f"{module.__name__}.{qual}")
    return bad


@pytest.fixture
def double(hp):
    return {name: importlib.import_module(name) for name in MODULES}


def test_every_member_of_the_double_names_its_source(double):
    bad = []
    counted = 0
    for name, module in double.items():
        counted += sum(1 for _ in _members(module))
        bad += missing_notes(module, name in MIRRORED)
    assert counted > 150  # the walk reaches classes, nested classes, methods and properties
    assert not bad, "members without a source note:\n  " + "\n  ".join(bad)


def test_the_check_fails_on_a_member_without_a_note(double, monkeypatch):
    """A method, a property, a nested class and a module function added without a note, and a
    public member that only says 'Double only', are each reported."""
    pyhailort = double["hailo_platform.pyhailort.pyhailort"]
    code = ("class _Probe:\n"
            "    '''HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::Probe'''\n"
            "    def method(self):\n        return 1\n"
            "    @property\n    def prop(self):\n        return 2\n"
            "    class Nested:\n        pass\n"
            "def probe_function():\n    pass\n"
            "def public_double_only():\n    '''Double only: nothing'''\n"
            "def cites_unread_file():\n    '''HailoRT 4.23: src/not_read.cpp::f'''\n")
    ns: dict = {"__name__": pyhailort.__name__}
    exec(compile(code, inspect.getsourcefile(pyhailort), "exec"), ns)  # as if written in that file
    for name in ("_Probe", "probe_function", "public_double_only", "cites_unread_file"):
        monkeypatch.setattr(pyhailort, name, ns[name], raising=False)
    bad = missing_notes(pyhailort, mirrored=True)
    for expected in ("_Probe.method", "_Probe.prop", "_Probe.Nested", "probe_function", "public_double_only",
                     "cites_unread_file: cites unknown file(s) ['src/not_read.cpp']"):
        assert f"{pyhailort.__name__}.{expected}" in bad
    assert f"{pyhailort.__name__}._Probe" not in bad  # it has its note
    assert len(bad) == 6, bad


@pytest.fixture
def double52(hp52):
    return {name: importlib.import_module(name) for name in MODULES_52}


def test_every_member_of_the_52_double_names_its_source(double52):
    bad = []
    counted = 0
    for name, module in double52.items():
        counted += sum(1 for _ in _members(module))
        bad += missing_notes(module, mirrored=name == "hailo_platform", note=NOTE_52, known=KNOWN_FILES_52)
    assert counted >= 10
    assert not bad, "members without a HailoRT 5.2 note:\n  " + "\n  ".join(bad)
    assert double52["hailo_platform"].__version__ == "5.2.0"


def _notes_in(root: Path, version: str):
    pattern = NOTE if version == "4.23" else NOTE_52
    for path in sorted(root.rglob("*.py")):
        for m in pattern.finditer(path.read_text(encoding="utf-8")):
            yield path, m.group("file"), m.group("symbol")


def note_mismatches(root: Path, version: str, src: Path):
    """Notes whose file is not in HailoRT's source at that tag, or whose symbol's last name does
    not occur in the file."""
    bad = []
    tag = {"4.23": "v4.23.0", "5.2": "v5.2.0"}[version]
    for path, file, symbol in _notes_in(root, version):
        target = src / tag / "hailort" / "libhailort" / file
        if not target.is_file():
            if (version, file) not in NOT_IN_COPY:
                bad.append(f"{path.name}: {file} is not in HailoRT {tag}")
            continue
        last = re.split(r"::|\.", symbol)[-1]
        if symbol != "<module>" and last not in target.read_text(encoding="utf-8", errors="replace"):
            bad.append(f"{path.name}: {file}::{symbol}: {last!r} does not occur in HailoRT {tag}'s file")
    return bad


@pytest.mark.parametrize("version,root", [("4.23", FAKE_ROOT), ("5.2", FAKE_ROOT_52)])
def test_the_notes_match_hailort_source(version, root):
    if not (HAILORT_SRC / "v4.23.0").is_dir() or not (HAILORT_SRC / "v5.2.0").is_dir():
        pytest.skip(f"HailoRT's source is not at {HAILORT_SRC} (set HAILO_DECODE_HAILORT_SRC)")
    assert sum(1 for _ in _notes_in(root, version)) >= (150 if version == "4.23" else 8)
    bad = note_mismatches(root, version, HAILORT_SRC)
    assert not bad, "\n  ".join(bad)


def test_the_source_check_fails_on_a_wrong_note(tmp_path):
    if not (HAILORT_SRC / "v5.2.0").is_dir():
        pytest.skip(f"HailoRT's source is not at {HAILORT_SRC}")
    (tmp_path / "probe.py").write_text('"""HailoRT 5.2: src/transform/transform.cpp::no_such_function_here\n'
                                       'HailoRT 5.2: src/not/there.cpp::f"""\n')
    bad = note_mismatches(tmp_path, "5.2", HAILORT_SRC)
    assert len(bad) == 2 and "no_such_function_here" in bad[0] and "not in HailoRT" in bad[1]


def test_the_double_is_the_one_on_the_path(double):
    assert all(str(FAKE_ROOT) in (inspect.getsourcefile(m) or "") for m in double.values())
    assert "hailo_platform" in sys.modules
