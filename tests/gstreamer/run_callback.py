"""Runs a documented hailo-apps callback (a Python block defining app_callback(pad, info,
user_data)) as the pad probe of the element named `probe` in a real pipeline, under Debian's
/usr/bin/python3 with TAPPAS' `hailo` module: to EOS, then exit 0 with what it printed, or exit 1
when the callback raised (PyGObject would only print such an exception and go on).

    python3 run_callback.py CALLBACK.py PIPELINE
"""

import sys
import traceback

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def main() -> int:
    namespace: dict = {}
    exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)
    callback = namespace["app_callback"]
    Gst.init(None)
    pipeline = Gst.parse_launch(sys.argv[2])
    failures: list = []
    calls = [0]

    def probe(pad, info, user_data):
        calls[0] += 1
        try:
            return callback(pad, info, user_data)
        except Exception:  # noqa: BLE001 - reported below: the run fails
            failures.append(traceback.format_exc())
            return Gst.PadProbeReturn.OK

    pipeline.get_by_name("probe").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, probe, None)
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg is None or msg.type != Gst.MessageType.EOS:
        print("no EOS", file=sys.stderr)
        return 1
    print(f"calls {calls[0]}")
    if failures:
        print("".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
