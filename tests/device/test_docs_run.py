"""Every ```python block of README.md and docs/*.md runs as written, in page order.

A reader pastes a page's blocks one after the other into one interpreter; so does this test:
each page's blocks go, in order, into one file (kernels need a source file), which runs in a
fresh interpreter with the working tree on PYTHONPATH. A failure names the page, the block
(counted from 1 on that page) and the error. Blocks that state a value in a comment assert it
themselves, so the pages check their results, not only that they run. What is not a program
(a signature, a sketch, a fragment) is fenced as ```text and not run.

The number of python blocks of each page is pinned, so that a block cannot silently stop
being run (re-fenced, say): change the count here when you add or remove one.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# page -> the number of ```python blocks it holds
PYTHON_BLOCKS = {
    "README.md": 1,
    "docs/api.md": 14,
    "docs/contributing.md": 0,
    "docs/examples.md": 10,
    "docs/float64.md": 0,
    "docs/language.md": 13,
    "docs/performance.md": 0,
    "docs/runtime.md": 0,
    "docs/scale.md": 3,
}

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The page's ```python blocks as (first line number of the code, code), in order."""
    blocks = []
    for m in _FENCE.finditer(text):
        if m.group(1).strip() == "python":
            line = text.count("\n", 0, m.start(2)) + 1
            blocks.append((line, m.group(2)))
    return blocks


def page_program(blocks: list[tuple[int, str]]) -> tuple[str, list[tuple[int, int]]]:
    """The blocks joined into one program, and for each block its (first, last) program line."""
    lines: list[str] = []
    spans = []
    for _, code in blocks:
        first = len(lines) + 1
        lines.extend(code.rstrip("\n").split("\n"))
        spans.append((first, len(lines)))
        lines.append("")
    return "\n".join(lines) + "\n", spans


def run_page(page: str, tmp_path: pathlib.Path, timeout: float = 300):
    """Run ``page``'s blocks in one fresh interpreter; returns (CompletedProcess, script, spans)."""
    blocks = python_blocks((ROOT / page).read_text())
    program, spans = page_program(blocks)
    script = tmp_path / (re.sub(r"\W", "_", page) + ".py")
    script.write_text(program)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("CTHREADS_DEVICE_COPIES", None)          # the reader's machine: its own devices
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=timeout)
    return proc, script, spans, blocks


def failing_block(stderr: str, script: pathlib.Path, spans) -> tuple[int, int] | None:
    """(block number from 1, line within that block from 0) of the line of ``script`` that the
    traceback names last."""
    lines = [int(m) for m in re.findall(r'File "%s", line (\d+)' % re.escape(str(script)), stderr)]
    if not lines:
        return None
    for k, (first, last) in enumerate(spans, 1):
        if first <= lines[-1] <= last:
            return k, lines[-1] - first
    return None


def test_every_page_with_python_blocks_is_counted():
    pages = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))
    assert sorted(PYTHON_BLOCKS) == sorted(pages), "add the new page to PYTHON_BLOCKS"
    counts = {page: len(python_blocks((ROOT / page).read_text())) for page in pages}
    assert counts == PYTHON_BLOCKS


@pytest.mark.parametrize("page", [p for p, n in PYTHON_BLOCKS.items() if n])
def test_page_blocks_run_in_order(page, tmp_path, device_name):
    proc, script, spans, blocks = run_page(page, tmp_path)
    if proc.returncode != 0:
        found = failing_block(proc.stderr, script, spans)
        if found:
            k, offset = found
            where = f"block {k} of {len(blocks)}, at {page}:{blocks[k - 1][0] + offset},"
        else:
            where = "outside the blocks"
        tail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        pytest.fail(f"{page}: {where} failed: {tail}\n--- stderr ---\n{proc.stderr[-4000:]}")


if __name__ == "__main__":               # a report: python tests/device/test_docs_run.py
    import tempfile
    for page in PYTHON_BLOCKS:
        with tempfile.TemporaryDirectory() as tmp:
            proc, script, spans, blocks = run_page(page, pathlib.Path(tmp))
            found = failing_block(proc.stderr, script, spans) if proc.returncode else None
            last = proc.stderr.strip().splitlines()[-1] if proc.returncode else "ok"
            print(f"{page}: {len(blocks)} blocks, "
                  f"{'all run' if not proc.returncode else f'stops at block {found}: {last}'}")
