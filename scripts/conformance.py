"""Run StableHLO's conformance corpus with xhlo-run and summarise it by family.

Exit status 1 if the pass rate is below --min-pass-rate. Files marked
RUN-DISABLED (the reference interpreter does not pass them either) are run
like every other file and counted separately.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path


def family(path: str) -> str:
    name = Path(path).stem
    return re.split(r"_(?:u?int|float|bfloat|complex|bool|f\d|i\d)", name)[0]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("corpus", help="folder of .mlir files (searched recursively)")
    p.add_argument("--min-pass-rate", type=float, default=0.0)
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args()
    files = sorted(str(f) for f in Path(args.corpus).rglob("*.mlir"))
    proc = subprocess.run(
        [sys.executable, "-m", "xhlo.tools.run", "-q", "--timeout", str(args.timeout), *files],
        capture_output=True, text=True,
    )
    failed = {}
    for line in proc.stdout.splitlines():
        if line.startswith("FAIL "):
            path, _, reason = line[5:].partition(": ")
            failed[path] = reason
    disabled = {f for f in files if "RUN-DISABLED" in Path(f).read_text(errors="replace")[:2000]}
    by_family = collections.defaultdict(list)
    for path, reason in failed.items():
        by_family[family(path)].append((path, reason))
    for fam, items in sorted(by_family.items()):
        print(f"FAILING family {fam}: {len(items)} file(s)")
        for path, reason in items:
            tag = " [RUN-DISABLED upstream]" if path in disabled else ""
            print(f"  {path}{tag}: {reason[:300]}")
    passed = len(files) - len(failed)
    rate = passed / len(files) if files else 0.0
    print(f"conformance: {passed} of {len(files)} passed ({rate:.1%}); "
          f"{len(disabled)} RUN-DISABLED files, {len(disabled & set(failed))} of them failing")
    return 0 if rate >= args.min_pass_rate else 1


if __name__ == "__main__":
    sys.exit(main())
