#!/usr/bin/env python3
"""The man page (app/attnscope.1, made by tools/gen-manpage.py from the help texts) covers
every command that `attnscope --help` lists and every option each command's --help names, and
groff renders it without a warning.  Usage: test-manpage.py ATTNSCOPE PAGE"""
import os
import re
import shutil
import subprocess
import sys

exe, page_path = sys.argv[1], sys.argv[2]
env = dict(os.environ, LANGUAGE="C", LC_ALL="C.UTF-8")
page = open(page_path, encoding="utf-8").read()
plain = page.replace("\\-", "-").replace("\\e", "\\")
failures = []


def helptext(*args):
    r = subprocess.run([exe, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"attnscope {' '.join(args)} exited with {r.returncode}:\n{r.stderr}")
    return r.stdout


top = helptext("--help")
cmds = re.findall(r"^  ([a-z][a-z0-9-]*)\s{2,}", top.split("Commands:")[1].split("\n\n")[0], re.M)
if len(cmds) < 10:
    failures.append(f"only {len(cmds)} commands found in --help: {cmds}")
for c in cmds:
    if f".SS {c}\n" not in page:
        failures.append(f"no section for the command {c}")
        continue
    section = plain.split(f".SS {c}\n")[1].split(".SS ")[0]
    for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", helptext(c, "--help")))):
        if opt not in section:
            failures.append(f"{c}: {opt} is in `attnscope {c} --help` but not in the page")
for sect in ("NAME", "SYNOPSIS", "DESCRIPTION", "WINDOW OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT"):
    if f".SH {sect}\n" not in page:
        failures.append(f"no .SH {sect}")
if shutil.which("groff"):
    r = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8", page_path], capture_output=True, text=True, env=env)
    if r.returncode != 0 or r.stderr.strip():
        failures.append("groff warns: " + r.stderr.strip())
else:
    print("note: no groff here; the rendering is not checked")
for f in failures:
    print("FAIL:", f)
print(f"{len(cmds)} commands checked" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
