"""python3 -m radixmesh.bench: a quick run checks every result against NumPy and writes its lines."""
import json

import pytest

pytest.importorskip("numpy")
from radixmesh import bench  # noqa: E402


def test_a_quick_run_writes_checked_lines(tmp_path, capsys):
    out = tmp_path / "python.jsonl"
    assert bench.main(["--quick", "--reps", "1", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["benchmark"] for line in lines} == {"python_sort", "python_topk", "python_overhead"}
    assert sum(line["ours"] for line in lines) == 6  # 2 sorts, 2 top-k, 2 overhead cases
    assert all(line["median_ms"] > 0 and line["commit"] and line["item_unit"] for line in lines)
    assert all("speedup_of_ours" in line for line in lines if not line["ours"] and not line.get("diagnostic"))
    assert "python layer, topk:" in capsys.readouterr().out


def test_a_missing_results_directory_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RXM_RESULTS_DIR", str(tmp_path / "missing"))
    with pytest.raises(SystemExit) as e:
        bench.main(["--quick"])
    assert "no directory" in str(e.value) and "fix:" in str(e.value)
