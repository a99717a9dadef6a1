"""The TAPPAS plugin and its test host, built once per ABI line and pytest session, shared by
tests/test_tappas_plugin.py and tests/fuzz/test_fuzz_tappas.py: the build (exactly as `hailo-decode
tappas build --host` builds them, against the installed package and the headers in
../shared/tappas), the host's frame-description format (cpp/tappas/tests/host.cpp) and its runs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "tappas"
LINES = ("5.1", "3.31")
ABI = {"5.1": "5.x: hailo_tensor_metadata_t", "3.31": "3.x: hailo_vstream_info_t"}


@dataclass
class Built:
    line: str
    plugin: Path
    host: Path
    stdout: str


def host_env() -> Dict[str, str]:
    # A sanitizer runtime CI preloads into Python is not for the build tools; a sanitized core
    # links its runtime into the plugin and the host itself.
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


_BUILT: Dict[str, Built] = {}  # per line, for the session: every test module shares one build


def build(line: str, tmp_path_factory: Any) -> Built:
    """The plugin and host for `line` (skips the test without the headers or the C++ side)."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the TAPPAS headers (../shared/tappas beside the repository) are needed "
                    "to build the plugin")
    from hailo_decode import cmake_info
    try:
        cmake_info.cmake_dir()
    except FileNotFoundError as e:
        pytest.skip(f"the installed package has no C++ side: {e}")
    if line not in _BUILT:
        from hailo_decode.cli import main
        out = tmp_path_factory.mktemp(f"tappas{line}")
        include = f"{SHARED / line / 'tappas'};{SHARED / line / 'hailort'}"
        printed, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
            status = main(["tappas", "build", "--include", include, "--out", str(out), "--build-dir",
                           str(out / "build"), "--host", "--jobs", "2"])
        assert status == 0, errors.getvalue()
        _BUILT[line] = Built(line, out / "libhailo_decode_tappas.so", out / "hailo_decode_tappas_host",
                             printed.getvalue())
    return _BUILT[line]


@dataclass
class Out:
    """One output as hailonet hands it: data (frames, H, W, C) in the buffer's type, or (frames, n)
    float32 for an NMS op's output; what the metadata says (its type, quantization, NMS shape)."""
    name: str
    data: np.ndarray
    meta_type: str = "UINT8"
    zp: float = 0.0
    scale: float = 1.0
    nms: Optional[Tuple[int, int]] = None  # (classes, max_bboxes_per_class)


def output_line(name: str, shape: Sequence[int], meta_type: str, zp: float, scale: float,
                nms: Optional[Tuple[int, int]], bytes_per_frame: int, path: Path) -> str:
    """One output's line of the description (host.cpp): zp and scale as strtof reads them."""
    h, w, c = shape
    classes, mpc = nms or (0, 0)
    return (f"{name} {h} {w} {c} {meta_type} {float(zp)!r} {float(scale)!r} {int(nms is not None)} "
            f"{classes} {mpc} {bytes_per_frame} {path}")


def write_frames(folder: Path, outs: Sequence[Out]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"outputs {len(outs)}"]
    frames = None
    for i, o in enumerate(outs):
        data = np.ascontiguousarray(o.data)
        frames = data.shape[0] if frames is None else frames
        assert data.shape[0] == frames
        path = folder / f"out{i}.bin"
        data.tofile(path)
        shape = (0, 0, 0) if o.nms else data.shape[1:]
        lines.append(output_line(o.name, shape, o.meta_type, o.zp, o.scale, o.nms, data[0].nbytes, path))
    lines.append(f"frames {frames}")
    desc = folder / "frames.txt"
    desc.write_text("\n".join(lines) + "\n")
    return desc


def host_command(built: Built, desc: Optional[Path], config: Any = None, function: str = "filter",
                 scaling: Optional[Sequence[float]] = None, extra: Sequence[str] = (),
                 plugin: Optional[Path] = None) -> List[str]:
    cmd = [str(built.host), "--plugin", str(plugin or built.plugin), "--config", str(config or "NULL"),
           "--function", function]
    cmd += ["--frames", str(desc)] if desc is not None else ["--synthetic"]
    if scaling is not None:
        cmd += ["--scaling", *[repr(float(v)) for v in scaling]]
    return cmd + list(extra)


def run_host(built: Built, desc: Optional[Path], config: Any = None, function: str = "filter",
             scaling: Optional[Sequence[float]] = None, extra: Sequence[str] = (),
             tmp: Optional[Path] = None, plugin: Optional[Path] = None) -> Tuple[List[dict], str]:
    """Runs the frames through the plugin (or another post-process .so, `plugin`, e.g. TAPPAS'
    own); returns (frames' objects, stderr). `config`: None ("NULL"), a dict (written to a file),
    or a path."""
    if isinstance(config, dict):
        assert tmp is not None
        path = tmp / f"config_{abs(hash(json.dumps(config, sort_keys=True)))}.json"
        path.write_text(json.dumps(config))
        config = path
    cmd = host_command(built, desc, config, function, scaling, extra, plugin)
    r = subprocess.run(cmd, capture_output=True, text=True, env=host_env(), timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    if "--quiet" in extra or "--bench" in extra:
        return [], r.stderr
    doc = json.loads(r.stdout)
    assert doc["abi"] == (ABI[built.line] if plugin is None else "")
    return doc["frames"], r.stderr
