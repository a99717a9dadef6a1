#!/usr/bin/env python3
"""Runs the fuzz harnesses of tests/fuzz/ for a given time, with fresh randomness, and reports the
number of cases run and every failure with a replayable reproducer.

    python scripts/fuzz.py --seconds 600                  # every harness, 10 minutes in all
    python scripts/fuzz.py --seconds 600 --target hef     # decoder | hef | interop | all
    python scripts/fuzz.py --seconds 60 --harness decode_valid --jobs 1
    python scripts/fuzz.py --replay '<spec json>'         # re-run one case (printed with a failure)
    python scripts/fuzz.py --list                         # the harnesses

Or through the Makefile: make fuzz SECONDS=3600 TARGET=hef

Needs the package and its test extra installed (pip install -e '.[test]'). The real HEFs are read
from ../shared/hefs (or $HAILO_DECODE_HEFS); without them that harness is skipped.

How it works: the time is split evenly among the harnesses of the target; each runs in a worker
process (--jobs at a time, default 2) that draws cases with hypothesis in batches until its time
is up, and records outcomes and failures (an exception other than the allowed ones, or a failed
sanity check) in a status file. Before each case the worker writes the case to a log file: when a
case kills the worker (SIGSEGV, SIGABRT, or the watchdog ending a hang), the parent reports that
case as the crash's reproducer and starts a new worker for the time left. The exit status is 1
when anything failed. A case recognized as one of the fixed bugs listed in FUZZING.md (and in
tests/fuzz/decoder_cases.KNOWN) fails as that bug having come back.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

DECODER_HARNESSES = ("decode_valid", "decode_faults", "nms_input", "nms_json", "core", "by_score_input",
                     "bbox_only_input")
HEF_HARNESSES = ("hef_real", "hef_writer", "hef_generated", "hef_header")
INTEROP_HARNESSES = ("interop",)
TARGETS = {"decoder": DECODER_HARNESSES, "hef": HEF_HARNESSES, "interop": INTEROP_HARNESSES,
           "all": DECODER_HARNESSES + HEF_HARNESSES + INTEROP_HARNESSES}


def _harness(name: str) -> Tuple[Any, Callable[[Dict[str, Any]], str]]:
    """(hypothesis strategy, runner) of a harness; the same ones the tests use."""
    from fuzz import decoder_cases as dc

    if name in INTEROP_HARNESSES:
        from fuzz import test_fuzz_interop as ti

        return ti.interop_specs(), ti.run_interop_spec
    if name in DECODER_HARNESSES:
        from fuzz import nms_forms_cases as nf

        strategy = {"decode_valid": lambda: dc.decode_specs(valid=True),
                    "decode_faults": lambda: dc.decode_specs(valid=False),
                    "nms_input": dc.nms_input_specs, "nms_json": dc.nms_json_specs, "core": dc.core_specs,
                    "by_score_input": nf.by_score_specs, "bbox_only_input": nf.bbox_only_specs}[name]()
        return strategy, dc.run_spec
    from fuzz import test_fuzz_hef as th

    if name == "hef_real":
        names = th.real_base_names()
        return (th.hef_mutation_specs(names) if names else None), th.run_hef_spec
    strategy = {"hef_writer": lambda: th.hef_mutation_specs(th.writer_base_names()),
                "hef_generated": th.hef_generated_specs, "hef_header": th.hef_header_specs}[name]()
    return strategy, th.run_hef_spec


def replay(spec_json: str) -> str:
    spec = json.loads(spec_json)
    if spec["kind"] == "interop":
        from fuzz import test_fuzz_interop as ti

        return ti.run_interop_spec(spec)
    if spec["kind"].startswith("hef_"):
        from fuzz import test_fuzz_hef as th

        return th.run_hef_spec(spec)
    from fuzz import decoder_cases as dc

    return dc.run_spec(spec)


def reproducer(spec_json: str) -> str:
    return f"python scripts/fuzz.py --replay '{spec_json}'"


# ------------------------------------------------------------------------------------------------
# Worker: one harness until a deadline
# ------------------------------------------------------------------------------------------------
def worker(name: str, until: float, status_path: str, case_log: str, seed: int) -> int:
    os.environ["HAILO_DECODE_FUZZ_CASE_LOG"] = case_log
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import HypothesisException

    from fuzz import decoder_cases as dc

    strategy, run = _harness(name)
    status: Dict[str, Any] = dict(harness=name, cases=0, outcomes={}, failures={}, skipped=None, batches=0)
    if strategy is None:
        status["skipped"] = "no real HEFs found (set HAILO_DECODE_HEFS)"
        Path(status_path).write_text(json.dumps(status))
        return 0
    failing: List[Tuple[str, str, str]] = []   # (key, spec json, traceback) of the latest failing call

    def make_prop() -> Callable[[Dict[str, Any]], None]:
        def prop(spec: Dict[str, Any]) -> None:
            status["cases"] += 1
            try:
                run(spec)
            except Exception as e:
                key = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                failing.append((key, dc.spec_json(spec), traceback.format_exc(limit=-6)))
                raise
        return prop

    def save() -> None:
        status["outcomes"] = dict(collections.Counter(dc.OUTCOMES))
        tmp = status_path + ".tmp"
        Path(tmp).write_text(json.dumps(status))
        os.replace(tmp, status_path)

    batch = 0
    while time.time() < until:
        batch += 1
        failing.clear()
        s = settings(max_examples=100, deadline=dc.DEADLINE, database=None, derandomize=False, print_blob=False,
                     phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False,
                     suppress_health_check=list(HealthCheck))
        # a fresh, reproducible stream per batch
        test = hypothesis_seed(seed * 1_000_003 + batch)(given(strategy)(s(make_prop())))
        try:
            test()
        except (Exception, HypothesisException):
            if failing:
                key, spec, tb = failing[-1]       # hypothesis replays the shrunk case last
                f = status["failures"].setdefault(key, dict(count=0, spec=spec, traceback=tb))
                f["count"] += 1
        status["batches"] = batch
        save()
    save()
    return 0


# ------------------------------------------------------------------------------------------------
# Parent: split the time, run workers, report
# ------------------------------------------------------------------------------------------------
def _spawn(name: str, until: float, workdir: str, seed: int, restart: int) -> Tuple[subprocess.Popen, str, str]:
    status = os.path.join(workdir, f"{name}.{restart}.status.json")
    case_log = os.path.join(workdir, f"{name}.case.json")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--until", repr(until),
           "--status", status, "--case-log", case_log, "--seed", str(seed + 7919 * restart)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, status, case_log


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=600.0, help="total wall time (split among the harnesses)")
    ap.add_argument("--target", choices=sorted(TARGETS), default="all")
    ap.add_argument("--harness", action="append", choices=DECODER_HARNESSES + HEF_HARNESSES,
                    help="run only this harness (repeatable); overrides --target")
    ap.add_argument("--jobs", type=int, default=2, help="workers at a time (default 2)")
    ap.add_argument("--seed", type=int, default=None, help="base seed (default: from the clock)")
    ap.add_argument("--json", metavar="PATH", help="also write the summary as JSON")
    ap.add_argument("--replay", metavar="SPEC_JSON", help="run one case and print its outcome")
    ap.add_argument("--list", action="store_true", help="list the harnesses")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--status", help=argparse.SUPPRESS)
    ap.add_argument("--case-log", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        return worker(args.worker, args.until, args.status, args.case_log, args.seed)
    if args.replay is not None:
        print(replay(args.replay))
        return 0
    if args.list:
        for t, names in TARGETS.items():
            if t != "all":
                print(f"{t}: {', '.join(names)}")
        return 0

    names = list(dict.fromkeys(args.harness or TARGETS[args.target]))
    jobs = max(1, min(args.jobs, len(names)))
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    rounds = -(-len(names) // jobs)
    share = args.seconds / rounds  # each harness gets `share` seconds; `jobs` run side by side
    print(f"fuzzing {', '.join(names)} for {args.seconds:.0f} s ({share:.0f} s each, {jobs} at a time), seed {seed}",
          flush=True)

    results: Dict[str, Dict[str, Any]] = {}
    crashes: Dict[str, List[Dict[str, Any]]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="hailo-decode-fuzz-") as workdir:
        queue = list(names)
        running: Dict[str, Tuple[subprocess.Popen, str, str, float, int]] = {}
        statuses: Dict[str, List[str]] = collections.defaultdict(list)
        start = time.time()
        while queue or running:
            while queue and len(running) < jobs:
                name = queue.pop(0)
                until = time.time() + share
                proc, status, log = _spawn(name, until, workdir, seed, 0)
                running[name] = (proc, status, log, until, 0)
                statuses[name].append(status)
            time.sleep(0.5)
            for name, (proc, status, log, until, restart) in list(running.items()):
                rc = proc.poll()
                if rc is None:
                    continue
                err = proc.stderr.read() if proc.stderr else ""
                del running[name]
                if rc != 0:  # a crash, or the watchdog ending a hang
                    case = Path(log).read_text() if os.path.exists(log) else "{}"
                    kind = (f"killed by signal {signal.Signals(-rc).name}" if rc < 0 else
                            f"exit status {rc}" + (" (watchdog: a hang)" if "Timeout" in err else ""))
                    crashes[name].append(dict(kind=kind, spec=case, stderr=err[-3000:]))
                    print(f"  {name}: worker {kind}; case: {reproducer(case)}", flush=True)
                    if time.time() < until - 1 and restart < 20:
                        proc, status, log = _spawn(name, until, workdir, seed, restart + 1)
                        running[name] = (proc, status, log, until, restart + 1)
                        statuses[name].append(status)
                        continue
                results[name] = _merge([json.loads(Path(s).read_text()) for s in statuses[name]
                                        if os.path.exists(s)])
                r = results[name]
                print(f"  {name}: {r['cases']} cases" + (f" (skipped: {r['skipped']})" if r.get("skipped") else "") +
                      (f", {len(r['failures'])} failure(s)" if r["failures"] else "") +
                      (f", {len(crashes[name])} crash(es)" if crashes[name] else ""), flush=True)
        elapsed = time.time() - start

    total = sum(r["cases"] for r in results.values())
    failures = sum(len(r["failures"]) for r in results.values()) + sum(len(c) for c in crashes.values())
    print(f"\n{total} cases in {elapsed:.0f} s: {failures} failure(s)")
    for name in names:
        r = results.get(name, dict(cases=0, outcomes={}, failures={}))
        outs = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(r["outcomes"].items()))
        print(f"  {name:14s} {r['cases']:8d} cases   {outs}")
        for key, f in r["failures"].items():
            print(f"    FAILURE x{f['count']}: {key}\n      {reproducer(f['spec'])}\n" +
                  "\n".join("      " + line for line in f["traceback"].splitlines()[-8:]))
        for c in crashes.get(name, []):
            print(f"    CRASH ({c['kind']}):\n      {reproducer(c['spec'])}\n" +
                  "\n".join("      " + line for line in c["stderr"].splitlines()[-12:]))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(seconds=elapsed, seed=seed, cases=total, failures=failures,
                                                   results=results, crashes=crashes), indent=1))
    return 1 if failures else 0


def _merge(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = dict(cases=0, outcomes=collections.Counter(), failures={}, skipped=None)
    for p in parts:
        out["cases"] += p["cases"]
        out["outcomes"].update(p["outcomes"])
        out["skipped"] = out["skipped"] or p.get("skipped")
        for k, f in p["failures"].items():
            g = out["failures"].setdefault(k, dict(f, count=0))
            g["count"] += f["count"]
    out["outcomes"] = dict(out["outcomes"])
    return out


if __name__ == "__main__":
    sys.exit(main())
