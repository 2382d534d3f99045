#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from meson's testlog.json files (one JSON object
per line), summed over every file named (default build/meson-logs/testlog.json).  A file
that is missing counts as one failure.  Exit status 1 when anything failed."""
import json, sys

paths = sys.argv[1:] or ["build/meson-logs/testlog.json"]
counts = {"passed": 0, "failed": 0, "skipped": 0}
for path in paths:
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                entry = json.loads(line)
                r = entry.get("result", "")
                if r in ("OK", "EXPECTEDFAIL"):
                    counts["passed"] += 1
                elif r == "SKIP":
                    counts["skipped"] += 1
                else:
                    counts["failed"] += 1
                    print("FAILED:", entry.get("name"), r, f"({path})")
    except FileNotFoundError:
        print("FAILED: no test log", path)
        counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
sys.exit(1 if counts["failed"] else 0)
