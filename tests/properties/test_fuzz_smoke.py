"""CI smoke of the coverage-guided fuzz target (fuzz/fuzz_matcher.py, issue 6): a few hundred runs in a subprocess.

It proves the target starts, instruments the matcher and survives mutated inputs seeded from a few corpus-like
files; the long runs are manual (fuzz/README.md). Skipped when atheris is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = {
    "groups.txt": b"User-agent: *\nDisallow: /private\nAllow: /private/ok$\n\nUser-agent: googlebot\n"
                  b"Disallow: /*.php\n",
    "typos.txt": b"\xef\xbb\xbfuseragent foobot\ndissallow: /a%2Fb*\nsitemap: http://x/s.xml # c\r\n"
                 b"allow /index.html\n",
    "urls.txt": b"user-agent: foobot\ndisallow: /fish*.php$\n\n\x00URLS\x00\n/fish.php\n/fishheads/x.php?y\n",
}


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                    reason="atheris is not installed (pip install atheris)")
def test_fuzz_target_runs_clean(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, data in SEEDS.items():
        (corpus / name).write_bytes(data)
    run = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / "fuzz_matcher.py"), "-runs=300", "-seed=1", "-max_len=4096",
         f"-dict={ROOT / 'fuzz' / 'robots.dict'}", f"-artifact_prefix={tmp_path}/", str(corpus)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-4000:]
    assert "Done 300 runs" in log, log[-4000:]
    assert not list(tmp_path.glob("crash-*")), log[-4000:]
