# Thin wrapper over meson.  Quick start on a fresh Debian 12 machine:
#   make run     install what is missing, build, open the app on the demo model
#   make test    install, build, run the whole suite; ends with "N passed, N failed, N skipped"
BUILD ?= build
BUILDTYPE ?= release
MESON_OPTS ?=

.PHONY: all deps build run test bench clean fuzz test-asan test-valgrind

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

clean:
	rm -rf $(BUILD) build-asan
