"""The Raspberry Pi commands README.md and docs/hailort.md give are the ones CI runs in its arm64
root (.ci/aarch64.sh, between `# pi:<name>` and `# pi:end`), verbatim and in the same order: a
command changed in one place and not the other fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".ci" / "aarch64.sh"


def ci_blocks() -> dict:
    blocks, name = {}, None
    for line in CI.read_text().splitlines():
        s = line.strip()
        m = re.fullmatch(r"# pi:(\w+)", s)
        if m:
            name = None if m.group(1) == "end" else m.group(1)
            if name:
                blocks[name] = []
        elif name:
            blocks[name].append(s)
    return blocks


def doc_blocks(doc: Path) -> dict:
    """Each ```bash block that follows a `<!-- pi:<name> -->` line: its commands, comments dropped."""
    blocks = {}
    for m in re.finditer(r"<!-- pi:(\w+) -->\s*```bash\n(.*?)```", doc.read_text(), re.S):
        lines = [re.sub(r"\s+#.*$", "", ln).strip() for ln in m.group(2).splitlines()]
        blocks[m.group(1)] = [ln for ln in lines if ln and not ln.startswith("#")]
    return blocks


def test_the_ci_script_has_the_blocks():
    assert set(ci_blocks()) == {"install", "plugin", "sdist"}
    assert all(ci_blocks().values())


@pytest.mark.parametrize("doc", ["README.md", "docs/hailort.md"])
def test_documented_pi_commands_are_the_ones_ci_runs(doc):
    documented = doc_blocks(ROOT / doc)
    assert documented, f"{doc} has no Raspberry Pi block (<!-- pi:NAME --> before a bash block)"
    ci = ci_blocks()
    for name, commands in documented.items():
        assert name in ci, f"{doc}'s pi:{name} block is not in {CI.name}"
        assert commands == ci[name], f"{doc}'s pi:{name} commands differ from {CI.name}'s"


def test_the_check_sees_a_changed_command(tmp_path):
    readme = (ROOT / "README.md").read_text()
    changed = tmp_path / "README.md"
    changed.write_text(readme.replace("hailo-decode demo", "hailo-decode demo --frames 2", 1))
    assert doc_blocks(changed) != doc_blocks(ROOT / "README.md")
