# Thin wrapper over meson.  Quick start on a fresh Debian 12 machine:
#   make run     install what is missing, build, open the app on the demo model
#   make test    install, build, run the whole suite; ends with "N passed, N failed, N skipped"
BUILD ?= build
BUILDTYPE ?= release
MESON_OPTS ?=

.PHONY: all deps build run test bench bench-decoders clean fuzz test-asan test-valgrind coverage package test-package \
	test-slurm test-shards-big test-induction test-long test-attention-big

all: build

deps:
	@./tools/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=$(BUILDTYPE) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	$(BUILD)/app/attnscope

test: build
	@rm -f $(BUILD)/meson-logs/testlog.json
	-meson test -C $(BUILD) --print-errorlogs --num-processes 2 $(TESTS)
	@python3 tools/test-summary.py $(BUILD)/meson-logs/testlog.json

bench: build
	@./tools/bench.sh $(BUILD)

# The decoder shapes (qwen2.5-0.5b, smollm2-135m, llama-3.2-1b) against the torch peer, 128 and
# 512 tokens (a few minutes; llama-3.2-1b needs 5 GB of memory per tool): docs/PERFORMANCE.md
bench-decoders: build
	@./tools/bench-decoders.sh $(BUILD)

# The induction-head recipe (docs/training.md): trains it until a head scores >= 0.5 on
# held-out repeated runs, within the recipe's steps (`make test` runs it as train-induction;
# this runs only it, ATN_IND_SEED / ATN_IND_STEPS in the environment vary it).
test-induction: build
	$(BUILD)/tests/train/test-train induction

# The Head view at 4,096 tokens (issue 35): the pooled overview of a random bert-tiny, and
# the time from the forward to the first heatmap (ui-long runs 2,048 tokens in `make test`).
test-long: build
	ATN_TEST_LONG=1 GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANGUAGE=C \
		xvfb-run -a -s "-screen 0 1920x1080x24" $(BUILD)/tests/ui/test-long --tap

# A 4.3 GB attention file (issue 36, sparse: written in a moment) opens in the window in under a
# second with VmRSS bounded, and its last head shows (times and memory printed).
# ATN_TEST_BIG_DIR picks the folder (default a temporary one: 4.3 GB of holes, a few MB on disk).
test-attention-big: build
	ATN_TEST_BIG=1 GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANGUAGE=C \
		xvfb-run -a -s "-screen 0 1920x1080x24" $(BUILD)/tests/ui/test-attention --tap -p /ui/attention-file-big

# docs/cluster.md's Slurm recipe on a single-node Slurm (slurmctld, slurmd and munged on
# localhost, started and stopped by tools/test-slurm.sh): the array of shards and the dependent
# merge equal one process's stats --corpus.  Opt-in, not part of `make test`; SKIP with the
# reason where Slurm cannot start.
test-slurm: build
	@ATN_EXTRA_PKGS="slurm-wlm munge" ./tools/install-deps.sh
	./tools/test-slurm.sh $(BUILD)

# Issue 38's check at scale: a 10,000-line corpus in 7 shards merged equals one process, byte
# for byte (~30 s release: opt-in, not part of `make test`).
test-shards-big: build
	python3 tests/cli/test-shards.py $(BUILD)/app/attnscope big

# The Debian package (tools/debian/, debhelper with meson): PACKAGE_DIR/attnscope_<version>_amd64.deb.
# test-package installs it into a fresh Debian 12 chroot and runs the installed program there
# (tools/test-package.sh: models, devices, run against the demo's torch figures, export, the
# window under Xvfb, lintian); CI runs it after the suites.
PACKAGE_DIR ?= build-package
package: deps
	@ATN_EXTRA_PKGS="debhelper dpkg-dev fakeroot lintian" ./tools/install-deps.sh
	./tools/package.sh $(CURDIR)/$(PACKAGE_DIR)

test-package: build package
	@ATN_EXTRA_PKGS="debootstrap lintian imagemagick" ./tools/install-deps.sh
	-./tools/test-package.sh $(CURDIR)/$(BUILD) $(CURDIR)/$(PACKAGE_DIR)

# Fuzzing with libFuzzer (clang-14, apart from the meson build): builds tests/fuzz/fuzz-*.c
# into build-fuzz/ and runs each target for FUZZ_SECONDS, one at a time, nice'd; crash
# inputs land in build-fuzz/crashes/.  FUZZ_TARGETS picks some (safetensors config index
# toy vocab tokenize npy corpus tok-bpe tok-unigram tok-charsmap).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	@ATN_EXTRA_PKGS="clang-14 libclang-rt-14-dev" ./tools/install-deps.sh
	FUZZ_SECONDS=$(FUZZ_SECONDS) OUT=$(CURDIR)/build-fuzz ./tests/fuzz/run.sh $(FUZZ_TARGETS)

# The whole suite built with -fsanitize=address,undefined (gcc) in build-asan; any report
# fails its test (UBSan halts instead of printing and going on; gcc leaves float-to-int
# overflow out of "undefined", so it is named).  Full stacks on malloc make leak reports
# readable and let tests/bad/lsan.supp name the system libraries' caches by entry point.
# The window's tests (suite ui) run in a second pass with the fast (frame-pointer) unwinder:
# the full one made them 3-11x slower (ui-fit-1920: 783 s against 69 s under the same load;
# they were most of CI's time).  Its stacks stop in the first system library, so that pass
# reads tests/ui/lsan-ui.supp, which names cairo by library; cairo's own use is still checked
# with full stacks by the render and export tests of the first pass.  GDK_DEBUG=gl-disable
# keeps GDK from loading Mesa (the tests draw with cairo).
ASAN_LEAKS = $(shell ./tools/asan-leaks-work.sh)
ASAN_COMMON = UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 GDK_DEBUG=gl-disable
ASAN_ENV = $(ASAN_COMMON) \
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=$(ASAN_LEAKS):strict_string_checks=1:fast_unwind_on_malloc=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/bad/lsan.supp:print_suppressions=0
ASAN_UI_ENV = $(ASAN_COMMON) \
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=$(ASAN_LEAKS):strict_string_checks=1:fast_unwind_on_malloc=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/ui/lsan-ui.supp:print_suppressions=0
ASAN_TEST = meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 4
test-asan: deps
	@[ -f build-asan/build.ninja ] || meson setup build-asan --buildtype=debugoptimized \
		-Db_sanitize=address,undefined -Dc_args=-fsanitize=float-cast-overflow \
		-Dc_link_args=-fsanitize=float-cast-overflow $(MESON_OPTS)
	ninja -C build-asan
	@[ "$(ASAN_LEAKS)" = 1 ] || echo "note: LeakSanitizer cannot run here; leak checks are off for this run"
	@rm -f build-asan/meson-logs/testlog.json build-asan/meson-logs/testlog-ui.json
	-$(ASAN_ENV) $(ASAN_TEST) --no-suite ui $(TESTS)
	-$(ASAN_UI_ENV) $(ASAN_TEST) --suite ui --logbase testlog-ui $(TESTS)
	@cat build-asan/meson-logs/testlog-ui.json >> build-asan/meson-logs/testlog.json 2>/dev/null || true
	@python3 tools/test-summary.py build-asan/meson-logs/testlog.json

# valgrind on the CLI runs of the worked example and a Hugging Face test model (also part
# of `make test`; this runs only it).
test-valgrind: build
	@rm -f $(BUILD)/meson-logs/testlog.json
	-meson test -C $(BUILD) --print-errorlogs --suite valgrind
	@python3 tools/test-summary.py $(BUILD)/meson-logs/testlog.json

# Line coverage (gcc's gcov through meson's b_coverage) of the whole suite, or of TESTS:
# builds build-coverage/, clears the old counters, runs the tests, then gcovr reports engine/,
# ui/ and app/ (tests/ and generated sources left out) as build-coverage/coverage/index.html
# (a page per file, lines marked) and build-coverage/coverage.txt, and prints the totals.
# The build type is the one `make test` uses, so golden and the other exact tests hold.
coverage: deps
	@ATN_EXTRA_PKGS="gcovr" ./tools/install-deps.sh
	@[ -f build-coverage/build.ninja ] || meson setup build-coverage --buildtype=$(BUILDTYPE) \
		-Db_coverage=true $(MESON_OPTS)
	ninja -C build-coverage
	@find build-coverage -name '*.gcda' -delete
	@rm -f build-coverage/meson-logs/testlog.json
	-meson test -C build-coverage --print-errorlogs --num-processes 2 --timeout-multiplier 3 $(TESTS)
	-@python3 tools/test-summary.py build-coverage/meson-logs/testlog.json
	@mkdir -p build-coverage/coverage
	gcovr -r . -j 2 --filter engine/ --filter ui/ --filter app/ --gcov-ignore-parse-errors \
		--html-details build-coverage/coverage/index.html --txt build-coverage/coverage.txt \
		--print-summary build-coverage
	@echo "report: build-coverage/coverage/index.html (per file: build-coverage/coverage.txt)"

clean:
	rm -rf $(BUILD) build-asan build-coverage $(PACKAGE_DIR)
