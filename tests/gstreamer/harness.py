"""Real GStreamer for the tests (tests/test_gstreamer_*.py): TAPPAS 5.1's own elements and `hailo`
module and our hailonet stand-in (this folder's CMake project over ../shared/tappas/5.1), built
once per pytest session into build/gstreamer-tests (CMake rebuilds only what changed), and the
plugin built for the 5.1 line as tests/tappas/plugin_host.py builds it. Pipelines run in
subprocesses: gst-launch-1.0, or probe.py under Debian's /usr/bin/python3 (its gi; the test venv's
Python has none). Without Debian's packages or ../shared/tappas the tests skip with one line, and
fail instead when CI is set (CI must run them: .ci/run installs the packages)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from tappas.plugin_host import SHARED, host_env
from tappas.plugin_host import build as build_plugin

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TAPPAS_51 = SHARED / "5.1"
SYSTEM_PYTHON = Path("/usr/bin/python3")
BUILD = ROOT / "build" / "gstreamer-tests"
# What .ci/run installs (Debian): the tests need each of these.
DEBIAN_PACKAGES = ("libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools gstreamer1.0-plugins-base "
                   "gstreamer1.0-plugins-good libopencv-dev libxtensor-dev rapidjson-dev pybind11-dev python3-dev python-gi-dev "
                   "python3-gi python3-gst-1.0 python3-numpy pkgconf")


def unavailable(reason: str) -> None:
    """Skip on a developer's machine; fail in CI (CI=true), where .ci/run installed everything."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the real-GStreamer tests: .ci/run installs {DEBIAN_PACKAGES})")
    pytest.skip(reason)


def _pkg_config() -> Optional[str]:
    """Debian's pkg-config: the test extra's pip `pkgconf`, first on a venv's PATH, does not search
    the system's .pc files."""
    for path in ("/usr/bin/pkg-config", "/usr/bin/pkgconf"):
        if Path(path).is_file():
            return path
    return shutil.which("pkg-config")


def _missing() -> Optional[str]:
    if not (TAPPAS_51 / "src" / "core" / "hailo").is_dir():
        return f"{TAPPAS_51}/src is absent: TAPPAS' element sources (../shared/tappas) are needed"
    for tool in ("gst-launch-1.0", "cmake"):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian: {DEBIAN_PACKAGES})"
    pkg_config = _pkg_config()
    if pkg_config is None:
        return "pkg-config not found (Debian: pkgconf)"
    modules = ["gstreamer-1.0", "gstreamer-video-1.0", "gstreamer-app-1.0", "opencv4", "pygobject-3.0"]
    r = subprocess.run([pkg_config, "--exists", *modules], capture_output=True)
    if r.returncode != 0:
        return f"pkg-config finds not all of {' '.join(modules)} (Debian: {DEBIAN_PACKAGES})"
    for header in ("/usr/include/pybind11/pybind11.h", "/usr/include/xtensor/xarray.hpp"):
        if not Path(header).is_file():
            return f"{header} is absent (Debian: pybind11-dev libxtensor-dev)"
    if not SYSTEM_PYTHON.is_file():
        return f"{SYSTEM_PYTHON} is absent (Debian: python3-gi python3-gst-1.0 python3-dev)"
    r = subprocess.run([str(SYSTEM_PYTHON), "-c", "import gi; gi.require_version('Gst', '1.0'); "
                        "from gi.repository import Gst; import numpy, sysconfig; "
                        "assert sysconfig.get_paths()['include']"], capture_output=True, env=host_env())
    if r.returncode != 0:
        return f"{SYSTEM_PYTHON} has no GStreamer bindings or NumPy (Debian: python3-gi python3-gst-1.0 python3-numpy)"
    return None


@dataclass
class Gst:
    """The built elements and plugin, and how to run pipelines with them."""
    plugins: Path  # GST_PLUGIN_PATH: libgsthailotools.so (TAPPAS' elements), libgsthailonetstandin.so
    python: Path   # TAPPAS' hailo module
    whole_buffer: Path
    detection_croppers: Path
    plugin: Path   # libhailo_decode_tappas.so, 5.1 line

    def env(self) -> Dict[str, str]:
        env = host_env()
        # CI step 2 preloads ASan's runtime into Python; the plugin then links the sanitized core, and
        # that runtime must load first in gst-launch-1.0 and Debian's python3 too.
        preload = os.environ.get("LD_PRELOAD", "")
        if "libasan" in preload:
            env["LD_PRELOAD"] = preload
        env.update(GST_PLUGIN_PATH=str(self.plugins), GST_REGISTRY=str(BUILD / "registry.bin"),
                   PYTHONPATH=str(self.python), GST_DEBUG_NO_COLOR="1")
        env.pop("GST_PLUGIN_PATH_1_0", None)
        return env

    def launch(self, pipeline: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """gst-launch-1.0 with the pipeline (words split as a shell would not: give plain words)."""
        return subprocess.run(["gst-launch-1.0", "-q", *pipeline.split()], capture_output=True, text=True,
                              env=self.env(), timeout=timeout)

    def probe(self, pipeline: str, tmp: Path, hold: bool = False, timeout: float = 60, runs: int = 1) -> "Probed":
        """Runs the pipeline under probe.py (`runs` times, set to NULL in between); its frames as the
        `hailo` module reads them."""
        key = f"{abs(hash(pipeline))}_{int(hold)}_{runs}"
        out, spec = tmp / f"probe_{key}.json", tmp / f"spec_{key}.json"
        spec.write_text(json.dumps({"pipeline": pipeline, "out": str(out), "hold": hold, "timeout": timeout,
                                    "runs": runs}))
        r = subprocess.run([str(SYSTEM_PYTHON), str(HERE / "probe.py"), str(spec)], capture_output=True, text=True,
                           env=self.env(), timeout=timeout + 60)
        doc = json.loads(out.read_text()) if r.returncode == 0 and out.exists() else None
        return Probed(r.returncode, r.stderr, doc)


@dataclass
class Probed:
    returncode: int
    stderr: str
    doc: Optional[Dict[str, Any]]

    @property
    def frames(self) -> List[dict]:
        assert self.returncode == 0 and self.doc is not None, f"exit {self.returncode}\n{self.stderr[-3000:]}"
        assert self.doc["eos"] and not self.doc["errors"], self.doc["errors"]
        return self.doc["frames"]

    def host_frames(self) -> List[dict]:
        """The frames in the imitation host's shape (tests/test_tappas_plugin.py's checks read it)."""
        return [{"objects": [dict(d, type="detection") for d in f["detections"]]} for f in self.frames]


_ELEMENTS: Dict[str, Path] = {}


def build_elements() -> Path:
    """The CMake project, configured and built once per session (incremental across sessions)."""
    if "out" not in _ELEMENTS:
        missing = _missing()
        if missing:
            unavailable(missing)
        configure = ["cmake", "-S", str(HERE), "-B", str(BUILD), f"-DTAPPAS_DIR={TAPPAS_51}",
                     f"-DPYTHON_EXECUTABLE_FOR_HAILO={SYSTEM_PYTHON}", f"-DPKG_CONFIG_EXECUTABLE={_pkg_config()}"]
        BUILD.mkdir(parents=True, exist_ok=True)
        # One build at a time: several pytest runs of one checkout share the folder.
        with open(BUILD.parent / "gstreamer-tests.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for cmd in (configure, ["cmake", "--build", str(BUILD), "-j2"]):
                r = subprocess.run(cmd, capture_output=True, text=True, env=host_env())
                assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
        _ELEMENTS["out"] = BUILD / "out"
    return _ELEMENTS["out"]


def gst_session(tmp_path_factory: Any) -> Gst:
    out = build_elements()
    # HAILO_DECODE_TEST_PLUGIN: a plugin built elsewhere (e.g. from another commit's sources) instead.
    given = os.environ.get("HAILO_DECODE_TEST_PLUGIN")
    plugin = Path(given) if given else build_plugin("5.1", tmp_path_factory).plugin
    return Gst(out / "plugins", out / "python", out / "lib" / "libwhole_buffer.so",
               out / "lib" / "libdetection_croppers.so", plugin)


def words(*parts: str) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def letterbox_wrapper(gst: Gst, inner: str, name: str = "inference_wrapper") -> str:
    """hailo-apps' INFERENCE_PIPELINE_WRAPPER (gstreamer_helper_pipelines.py): the whole_buffer
    cropper with use-letterbox, the original frame bypassing inference, hailoaggregator joining them."""
    q = "queue leaky=no max-size-buffers=3 max-size-bytes=0 max-size-time=0"
    return words(f"{q} ! hailocropper name={name}_crop so-path={gst.whole_buffer} function-name=create_crops",
                 "use-letterbox=true resize-method=inter-area internal-offset=true",
                 f"hailoaggregator name={name}_agg",
                 f"{name}_crop. ! queue leaky=no max-size-buffers=20 max-size-bytes=0 max-size-time=0 ! {name}_agg.sink_0",
                 f"{name}_crop. ! {inner} ! {name}_agg.sink_1",
                 f"{name}_agg. ! {q}")


def inference(gst: Gst, recording: Path, config: Optional[Path], function: str = "filter",
              hailonet_extra: str = "", name: str = "net") -> str:
    """hailo-apps' INFERENCE_PIPELINE: videoscale, videoconvert, hailonet, hailofilter."""
    q = "queue leaky=no max-size-buffers=3 max-size-bytes=0 max-size-time=0"
    cfg = f"config-path={config}" if config is not None else ""
    return words(f"{q} ! videoscale n-threads=2 qos=false ! {q} ! video/x-raw,pixel-aspect-ratio=1/1 !",
                 f"videoconvert n-threads=2 ! {q} ! hailonet name={name}_hailonet hef-path={recording} batch-size=1",
                 f"{hailonet_extra} force-writable=true ! {q} !",
                 f"hailofilter name={name}_hailofilter so-path={gst.plugin} {cfg} function-name={function} qos=false !",
                 q)


def source(frames: int, width: int = 640, height: int = 640) -> str:
    return f"videotestsrc num-buffers={frames} ! video/x-raw,format=RGB,width={width},height={height}"


def write_config(tmp: Path, config: Dict[str, Any], name: Optional[str] = None) -> Path:
    path = tmp / (name or f"config_{abs(hash(json.dumps(config, sort_keys=True)))}.json")
    path.write_text(json.dumps(config))
    return path


__all__: Sequence[str] = ["Gst", "Probed", "gst_session", "inference", "letterbox_wrapper", "source", "words",
                          "write_config", "unavailable", "build_elements"]

