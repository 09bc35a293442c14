"""benchmarks/snippet_parity: it finds the difference the review found (an English word inside Thai text, bolded
mid-letter by the matcher of 3147fd8) and none against this checkout's own module."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import snippet_parity


def test_the_parity_harness_finds_the_thai_difference_and_none_against_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    (root / "th").mkdir(parents=True)
    (root / "th" / "sync.md").write_text("ดู[[แก้ไขปัญหา Obsidian Sync#การแก้ไขข้อขัดแย้ง|การแก้ไข]]\n", encoding="utf-8")
    assert snippet_parity.main(["--root", str(root), "--rev", "3147fd8"]) == 1
    assert "th: 2 of 18 differ" in capsys.readouterr().out
    assert snippet_parity.main(["--root", str(root), "--rev", "HEAD"]) == 0
