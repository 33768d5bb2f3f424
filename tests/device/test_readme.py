"""The README's kernel example runs and gives the values its comments state."""

from __future__ import annotations

import pathlib
import re
import runpy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_example(tmp_path, device_name):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "readme_example.py"        # kernels need a source file
    script.write_text(block)
    ns = runpy.run_path(str(script))
    # first launch: y = 2*x + y = [12, 24, 36]; then 100 launches of y += 0.5*x
    assert ns["y"] == [12.0 + 50.0, 24.0 + 100.0, 36.0 + 150.0]
    assert ns["x"] == [1.0, 2.0, 3.0]
