# A thin wrapper over CMake. Each configuration has its own build folder.
#   make          build (build/)
#   make test     install dependencies, build, run every test: plain, ASan+UBSan, TSan; every
#                 phase runs even after a failure, and one summary names every failed test
#                 (scripts/test.sh); test-plain, test-asan, test-tsan run one phase
#   make demo     trace the bundled demo end to end
#   make bench    the benchmarks (Release build, probes in and out)
#   make soak     check under load, full counts: the 259-process tree 20 times, blockio --requests
#                 200000 10 times, with stress-ng on every core; one false leak fails (root, BPF)
#   make fuzz     the libFuzzer harnesses, each for FUZZ_SECONDS (default 300); `make test` runs
#                 them for 15 s each
#   make deb      Debian packages libclosure0, libclosure-dev, closuretrace into dist/ (CPack)
#   make install  install libclosure and closuretrace (PREFIX=/usr/local), built for release
#                 (build-release/: no live list unless CLOSURE_DEBUG=ON, warnings not errors)
# Developer and CI builds (build, test, bench, fuzz) treat warnings as errors; the demo and
# install builds do not, so that a newer compiler's new warning does not stop a user.
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc)
FUZZ_SECONDS ?= 300
RELEASE_BUILD ?= build-release
DEB_BUILD ?= build-deb
DIST ?= dist
CLOSURE_DEBUG ?= OFF
DEVELOPER := -DCLOSURETRACE_WERROR=ON
CMAKE  := cmake
CTEST  := ctest --output-on-failure --timeout 600

.PHONY: all deps build test soak deb test-plain test-asan test-tsan demo bench fuzz install format clean

all: build

deps:
	@bash scripts/deps.sh

build:
	$(CMAKE) -S . -B build -DCLOSURE_DEBUG=ON $(DEVELOPER) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build build -j $(JOBS)

test: deps
	@bash scripts/test.sh plain asan tsan

test-plain: build
	$(CTEST) --test-dir build

soak: deps build
	bash tests/suites/trust/load_test.sh build/cli/closuretrace \
		build/tests/suites/trust/ct_tree build/examples/blockio 20 10 200000

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan:
	$(CMAKE) -S . -B build-asan -DCLOSURE_DEBUG=ON $(DEVELOPER) -DCLOSURETRACE_SANITIZE=address,undefined
	$(CMAKE) --build build-asan -j $(JOBS)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
		$(CTEST) --test-dir build-asan

# The library's tests, its concurrency stress test first of all, under ThreadSanitizer.
test-tsan:
	$(CMAKE) -S . -B build-tsan -DCLOSURE_DEBUG=ON $(DEVELOPER) -DCLOSURETRACE_SANITIZE=thread -DCLOSURETRACE_TOOL=OFF
	$(CMAKE) --build build-tsan -j $(JOBS)
	$(CTEST) --test-dir build-tsan -L lib

# Configures build/ and builds only the two targets the demo runs (scripts/demo.sh).
demo: deps
	$(CMAKE) -S . -B build -DCLOSURE_DEBUG=ON -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	bash scripts/demo.sh build

bench: deps
	$(CMAKE) -S . -B build-bench -DCMAKE_BUILD_TYPE=Release $(DEVELOPER)
	$(CMAKE) --build build-bench -j $(JOBS)
	bash tests/suites/bench/run.sh build-bench

# Crashes leave their input in the folder run.sh names; a corpus grows there only for the run.
fuzz: deps build
	bash tests/suites/fuzz/build.sh . build-fuzz
	bash tests/suites/fuzz/run.sh build-fuzz . $(FUZZ_SECONDS) build/lib/libclosure.so

install:
	$(CMAKE) -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOSURE_DEBUG=$(CLOSURE_DEBUG) \
		-DCLOSURETRACE_WERROR=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(RELEASE_BUILD) -j $(JOBS) --target closure closure_static closuretrace man_pages
	$(CMAKE) --install $(RELEASE_BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Release build for /usr, only the packaged targets; cmake/packaging.cmake says what goes where.
deb: deps
	$(CMAKE) -S . -B $(DEB_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
		-DCLOSURE_DEBUG=OFF -DCLOSURETRACE_WERROR=OFF -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON
	$(CMAKE) --build $(DEB_BUILD) -j $(JOBS) --target closure closure_static closuretrace man_pages \
		package_docs
	rm -rf $(DEB_BUILD)/cpack && cpack --config $(DEB_BUILD)/CPackConfig.cmake -B $(DEB_BUILD)/cpack
	mkdir -p $(DIST) && mv $(DEB_BUILD)/cpack/*.deb $(DIST)/

clean:
	rm -rf build build-asan build-tsan build-bench build-fuzz build-release build-deb dist
