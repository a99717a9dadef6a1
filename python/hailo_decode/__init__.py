"""hailo-decode: raw YOLOv8/YOLO11 head tensors from Hailo accelerators -> detections, exactly as
HailoRT's own post-process (or Ultralytics) would give them, in a C++ core.

The modules import one way (enforced by import-linter, see pyproject.toml), top to bottom:
cli > bench_tasks > bench > hailort > decoder > hef, diagnostics > detections > formats, interop >
demo_data > config > pairing > heads > outputs > _core.
"""

from ._core import simd_info
from .config import BOX_FORMATS, SEMANTICS, AnchorHead, DecoderConfig, Head, OutputInfo, SsdHead, YoloxHead
from .decoder import Decoder
from .detections import Detections, decode_hailo_nms, hailo_nms_buffer_size
from .hef import HefError, HefMismatchWarning, read_hef
from .hailort import HefQuantizationWarning

__version__ = "0.1.0"


def cmake_dir() -> str:
    """The directory holding hailo_decodeConfig.cmake (CMake's hailo_decode_DIR); see cmake_info."""
    # Imported when called: `python -m hailo_decode.cmake_info` must find that module not yet imported
    # (runpy warns on stderr otherwise, in front of every user of the documented command).
    from .cmake_info import cmake_dir as installed_cmake_dir
    return installed_cmake_dir()


__all__ = [
    "BOX_FORMATS",
    "SEMANTICS",
    "cmake_dir",
    "Decoder",
    "DecoderConfig",
    "Detections",
    "AnchorHead",
    "Head",
    "HefError",
    "HefMismatchWarning",
    "HefQuantizationWarning",
    "OutputInfo",
    "decode_hailo_nms",
    "hailo_nms_buffer_size",
    "read_hef",
    "simd_info",
    "YoloxHead",
    "SsdHead",
]
