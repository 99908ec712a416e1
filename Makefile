# Thin wrapper around CMake. `make` builds build/kernelsmith; `make test` runs every test.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= python3
TIMED = scripts/timed
# ccache shares objects between build trees of one checkout (build/ and the wheel's build-wheel/)
# when paths are taken relative to it.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all configure test test-cpp test-python test-e2e test-wheel clean format

# The worker's bytecode compiled once here: a sandboxed worker cannot write python/'s
# __pycache__, and compiling its modules at every start costs about a second on a slow host.
# checked-hash: an edited source is noticed and compiled afresh.
all: configure
	$(TIMED) cmake --build $(BUILD) -j $(JOBS)
	$(PYTHON) -m compileall -q --invalidation-mode checked-hash python/kernelsmith_worker

configure:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

test: all test-cpp test-python test-e2e test-wheel

# Test seams (src/testing) stay out of the product library ks_lib.
test-cpp: all
	cd $(BUILD) && ../scripts/timed ./ks_tests --gtest_brief=1
	@! nm -C $(BUILD)/libks_lib.a | grep -m1 'ks::TestLlmServer' || \
	  { echo "test-only code (src/testing) is compiled into ks_lib"; exit 1; }

# With a built binary the reward client is also tested against the real `kernelsmith serve`.
test-python:
	cd python && KS_SERVE_BINARY=$$(test -x ../$(BUILD)/kernelsmith && realpath ../$(BUILD)/kernelsmith) \
	  ../scripts/timed $(PYTHON) -m pytest -q tests

test-e2e: all
	$(TIMED) bash tests/e2e/run.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/evolve.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/shapes.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/bench.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/report.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/roofline.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/export.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/curate.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/serve.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/adversarial/run.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/faults/run.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/crash.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/llm_faults.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/bad_inputs.sh $(BUILD)/kernelsmith
	$(TIMED) bash tests/e2e/cluster.sh $(BUILD)/kernelsmith

# The pip package: wheel built, repaired, installed into a fresh venv and run outside the checkout.
test-wheel: all
	$(TIMED) bash tests/e2e/wheel.sh

clean:
	rm -rf $(BUILD) build-wheel

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h')
