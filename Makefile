# Shortcuts for developers; CI runs .ci/run.
SECONDS ?= 600
TARGET ?= all
FRAMES ?= 1000000

.PHONY: test fuzz bench soak ci wheels

test:            ## README's test command
	pip install ".[test]" && python -m pytest -q

fuzz:            ## the fuzz harnesses for longer: make fuzz SECONDS=3600 TARGET=decoder|hef|all
	python scripts/fuzz.py --seconds $(SECONDS) --target $(TARGET)

bench:           ## side-by-side benchmarks (BENCHMARKS.md)
	pip install ".[bench]" && hailo-decode bench --json bench.json --plot bench.png

soak:            ## resident memory and time per frame over a long run
	python benchmarks/soak.py --frames $(FRAMES)

wheels:          ## the release artifacts in dist/: sdist, x86-64 and aarch64 (cp311) wheels (as root; README)
	bash scripts/build_wheels.sh dist

ci:
	bash .ci/run
