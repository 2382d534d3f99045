"""What the Hub tests share (test_download.py, test_hostile_hub.py): the fake Hub
(fake_hub.py) started on 127.0.0.1 with its request log in a scratch folder, an environment
without the user's proxies, HF_* variables or saved token, attnscope run against it with a
cache of the test's choosing, the request log, and the list of failed checks.  Plain python3.

    H = hub_harness.Harness(atnscope, source_root, "atn-hub-test-", hostile=False)
    try:
        r = H.run(["download", "org/tiny"], cache)
        H.check(r.returncode == 0, "what went wrong")
    finally:
        H.close()
    H.exit("hub download")
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import fake_hub  # noqa: E402  (the same repositories the server serves)


class Harness:
    def __init__(self, atn, src, prefix, hostile=False, run_timeout=120):
        self.atn = atn
        self.models = os.path.join(src, "tests", "hf", "models")
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.log = os.path.join(self.tmp, "requests.log")
        self.run_timeout = run_timeout
        self.failures = []
        portf = os.path.join(self.tmp, "port")
        self.server = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_hub.py"), "--models", self.models,
                                        "--port-file", portf, "--log", self.log] + (["--hostile"] if hostile else []))
        # the port file appears once the server listens (written whole: fake_hub renames it)
        deadline = time.monotonic() + 60
        while not os.path.exists(portf):
            if self.server.poll() is not None or time.monotonic() > deadline:
                self.close()
                sys.exit("fake_hub.py %s" % ("exited with %d" % self.server.returncode
                                             if self.server.returncode is not None else "did not start in 60 s"))
            time.sleep(0.05)
        self.port = int(open(portf).read())
        self.endpoint = "http://127.0.0.1:%d" % self.port
        self.repos = fake_hub.build_repos(self.models, hostile)
        self.base_env = {k: v for k, v in os.environ.items()
                         if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
                         and not k.startswith("HF_") and k not in ("HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_CACHE")}
        self.base_env["HOME"] = os.path.join(self.tmp, "home")   # no saved token of the user's

    def env(self, cache, extra=None):
        env = dict(self.base_env, HF_ENDPOINT=self.endpoint, HF_HUB_CACHE=cache)
        env.update(extra or {})
        return env

    def run(self, args, cache, extra=None, timeout=None, **kw):
        """attnscope ARGS against the fake Hub with cache as HF_HUB_CACHE; a run past the
        timeout (run_timeout by default) comes back with returncode -999."""
        t = timeout or self.run_timeout
        try:
            return subprocess.run([self.atn] + args, env=self.env(cache, extra), capture_output=True, text=True,
                                  timeout=t, errors="replace", **kw)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -999, "", "timed out after %s s" % t)

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
            print("FAIL:", what, file=sys.stderr)

    def requests(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def clear_log(self):
        open(self.log, "w").close()

    def close(self):
        if self.server.poll() is None:
            self.server.terminate()
        self.server.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def exit(self, name):
        if self.failures:
            print("%d failures" % len(self.failures), file=sys.stderr)
            sys.exit(1)
        print("%s: all checks passed" % name)
