"""Test double of HailoRT 5.2's Python package `hailo_platform` (pyhailort 5.2.0, Hailo-10H / 15).

HailoRT 5.2: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::<module>

Put `tests/fake_hailo_platform_52` on sys.path (tests/conftest.py's `hp52` fixture, or `hp_any`
for both versions) and `import hailo_platform` gives the same names as the 4.23 double
(tests/fake_hailo_platform), with `__version__ = "5.2.0"` and HailoRT 5.2's behaviour where its
source differs from 4.23's. The 4.23 double's modules are reused where 5.2's pyhailort.py and
libhailort source are the same for what hailo-decode touches (the InferModel / ConfiguredInferModel
API, vstreams, quant_infos' single entry); `_v52` replaces the rest, each with its note
(`HailoRT 5.2: <file>::<symbol>`, file relative to hailort/libhailort at tag v5.2.0, checked by
tests/test_fake_hailo_notes.py against the source when it is there):

- HAILO_DISABLE_PP (read as HailoRT reads it: set, value starting with "1"): device orders,
  padded (hw) shapes as the shapes, outputs renamed to their sorted-output prefix, no NMS op,
  set_format_* ignored, device-layout frames (NHCW, FCR/NHWC padded, F8CR in blocks of 8).
- a Hailo-10H model (`FakeModel(..., hailo10h=True)`): VDevice.configure is HAILO_NOT_IMPLEMENTED
  (only the InferModel path exists); the async queue is the server's.
- per-feature quantization with empty qp_zps / qp_scales lists (`FakeOutput(..., per_feature=True)`
  with scalar zp/scale): the scalar for every channel, the quant_info zeroed.
- HAILO_NMS_BY_SCORE: only UINT8; shape = the frame's bytes.
"""

from pathlib import Path

# The 4.23 double's modules (pyhailort, _fake_device) are found through this package's path.
__path__.append(str(Path(__file__).resolve().parents[2] / "fake_hailo_platform" / "hailo_platform"))  # noqa: F821

from hailo_platform import _v52  # noqa: E402,F401 - installs 5.2's behaviour over the shared modules
from hailo_platform.pyhailort.pyhailort import (HEF, AsyncInferJob, ConfigureParams, FormatOrder, FormatType,  # noqa: E402,F401
                                                HailoCommunicationClosedException, HailoFormatFlags,
                                                HailoPowerMode, HailoRTException, HailoRTStreamAbortedByUser,
                                                HailoSchedulingAlgorithm, HailoStreamDirection,
                                                HailoStreamInterface, InferVStreams,
                                                InputVStreamParams, InputVStreams, OutputVStreamParams,
                                                OutputVStreams, VDevice)

__version__ = "5.2.0"

__all__ = ['HEF', 'ConfigureParams', 'FormatType', 'FormatOrder', 'HailoPowerMode', 'HailoStreamInterface',
           'InputVStreamParams', 'OutputVStreamParams', 'InputVStreams', 'OutputVStreams', 'InferVStreams',
           'HailoStreamDirection', 'HailoFormatFlags', 'VDevice', 'HailoRTException', 'HailoSchedulingAlgorithm',
           'HailoRTStreamAbortedByUser', 'AsyncInferJob', 'HailoCommunicationClosedException']
