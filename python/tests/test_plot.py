"""python3 -m radixmesh.plot on the committed benchmark results: every kind of chart is written."""
import glob
import os

import pytest

pytest.importorskip("matplotlib")  # Debian's python3-matplotlib, which scripts/setup installs
from radixmesh import plot  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results")


def test_charts_from_the_committed_results(tmp_path, capsys):
    files = sorted(glob.glob(os.path.join(RESULTS, "*.jsonl")))
    assert files
    assert plot.main(files + ["--out", str(tmp_path)]) == 0
    written = sorted(os.listdir(tmp_path))
    assert "topk-vs-peers.png" in written
    assert any(name.endswith("-scaling.png") for name in written)
    assert any(name.endswith("-throughput-vs-n.png") for name in written)
    assert all(os.path.getsize(tmp_path / name) > 10000 for name in written)
    assert capsys.readouterr().out.count(".png") == len(written)


def test_a_line_that_is_not_json_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"benchmark": "sort"}\nnot json\n')
    with pytest.raises(SystemExit) as e:
        plot.main([str(bad), "--out", str(tmp_path / "out")])
    assert "bad.jsonl:2 is not JSON" in str(e.value) and "fix:" in str(e.value)


def test_the_package_imports_without_its_library():
    """Plots need no C library: with none to load, `import radixmesh` works and calls raise Error."""
    import subprocess
    import sys
    code = ("import radixmesh, radixmesh.plot\n"
            "try:\n    radixmesh.version()\nexcept radixmesh.Error as e:\n    print('ERROR', e)\n")
    env = dict(os.environ, RXM_C_LIBRARY="/nonexistent/libradixmesh_c.so.0", LD_LIBRARY_PATH="")
    env["PYTHONPATH"] = os.path.join(os.path.dirname(__file__), "..")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    if "ERROR" in out.stdout:  # else an installed copy was found on the loader's path
        assert "could not be loaded" in out.stdout and "fix:" in out.stdout
