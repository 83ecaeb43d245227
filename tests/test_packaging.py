"""A plain (non-editable) install carries everything: packages, templates, the console script."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_packages_templates_and_entry_point(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("tf_migrate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("migrator", "rewrites", "templates"):
        shipped = {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        assert shipped and shipped <= names, shipped - names
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "tf-migrate = migrator.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
