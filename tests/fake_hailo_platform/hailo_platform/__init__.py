"""Test double of HailoRT's Python package `hailo_platform` (pyhailort), for hailo-decode's tests.

HailoRT 4.23: bindings/python/platform/hailo_platform/__init__.py::<module>

Put `tests/fake_hailo_platform` on sys.path (only in the tests that use it) and `import
hailo_platform` gives the names the real package's __init__ exports that hailo-decode touches
(hailo-ai/hailort hailort/libhailort/bindings/python/platform/hailo_platform/__init__.py,
HailoRT 4.23). As in the real package, InferModel, ConfiguredInferModel and ConfiguredNetwork are
not exported at the top level (they live in hailo_platform.pyhailort.pyhailort). The "device" is
a model described with `hailo_platform._fake_device`.
"""

from hailo_platform.pyhailort.pyhailort import (HEF, AsyncInferJob, ConfigureParams, FormatOrder, FormatType,  # noqa: F401
                                                HailoCommunicationClosedException, HailoFormatFlags,
                                                HailoPowerMode, HailoRTException, HailoRTStreamAbortedByUser,
                                                HailoSchedulingAlgorithm, HailoStreamDirection,
                                                HailoStreamInterface, InferVStreams,
                                                InputVStreamParams, InputVStreams, OutputVStreamParams,
                                                OutputVStreams, VDevice)

__version__ = "4.23.0"

__all__ = ['HEF', 'ConfigureParams', 'FormatType', 'FormatOrder', 'HailoPowerMode', 'HailoStreamInterface',
           'InputVStreamParams', 'OutputVStreamParams', 'InputVStreams', 'OutputVStreams', 'InferVStreams',
           'HailoStreamDirection', 'HailoFormatFlags', 'VDevice', 'HailoRTException', 'HailoSchedulingAlgorithm',
           'HailoRTStreamAbortedByUser', 'AsyncInferJob', 'HailoCommunicationClosedException']
