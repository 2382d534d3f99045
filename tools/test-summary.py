#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from meson's testlog.json (one JSON object per line)."""
import json, sys
path = sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"
counts = {"passed": 0, "failed": 0, "skipped": 0}
try:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                counts["passed"] += 1
            elif r == "SKIP":
                counts["skipped"] += 1
            else:
                counts["failed"] += 1
                print("FAILED:", json.loads(line).get("name"), r)
except FileNotFoundError:
    counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
sys.exit(1 if counts["failed"] else 0)
