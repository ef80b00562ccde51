# trail: the two commands that matter are `make demo` and `make test`. Both install what is
# missing (Debian packages, as root; PyPI packages pinned with hashes into $(BUILD)/venv; for
# `make test` also the peers into $(BUILD)/peers), configure, build, then run.
BUILD ?= build
JOBS ?= $(shell nproc)
# The CUDA backend must compile where scripts/install-deps.sh installs nvcc from PyPI (x86-64):
# ON makes a missing nvcc an error there rather than a build without the backend.
TRAIL_CUDA ?= $(if $(filter x86_64,$(shell uname -m)),ON,AUTO)

.PHONY: all deps peers configure build python assets test test-exhaustive test-sanitize fuzz soak demo bench clean

all: build

deps:
	scripts/install-deps.sh $(BUILD)

# PyTorch 2.x, transformers and lm-eval, pinned with hashes, in $(BUILD)/peers: what the interop
# tests and the training benchmark compare trail with.
peers: deps
	scripts/install-peers.sh $(BUILD)

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAIL_CUDA=$(TRAIL_CUDA)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The Python package (python/, docs/python.md) as a wheel built by pip (pyproject.toml,
# scikit-build-core), installed into the active virtual environment, else the user site of
# /usr/bin/python3; then `python3 -c "import trail"` works. `pip install .` does the same.
python: deps
	scripts/install-python.sh $(BUILD)

# Reference tokenizer files, the reference encoder and real text (pinned, hash-checked, not committed).
assets: deps
	scripts/fetch-assets.sh $(BUILD)/assets

# Unit tests, the golden-hash suite on every SIMD target and thread count, and the same golden
# hashes from an aarch64 build under qemu-aarch64; installs, configures, builds and fetches the
# assets first, and ends by saying where the time went ($(BUILD)/test-times.txt).
test:
	scripts/run-tests.sh $(BUILD) $(JOBS)

# The elementary functions over all 2^32 inputs each (several minutes).
test-exhaustive: build
	TRAIL_MATH_SWEEP_STRIDE=1 $(BUILD)/src/repops/repops_test --gtest_filter='MathAccuracy.*'

# The unit tests (and every committed fuzz input) built with AddressSanitizer and
# UndefinedBehaviorSanitizer, any report fatal.
test-sanitize: deps assets
	cmake -S . -B $(BUILD)-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAIL_SANITIZE=ON -DTRAIL_CUDA=OFF -DTRAIL_PYTHON=OFF \
	  -DTRAIL_BUILD_BENCH=OFF
	cmake --build $(BUILD)-sanitize -j $(JOBS)
	ln -sfn $(abspath $(BUILD))/assets $(BUILD)-sanitize/assets
	ctest --test-dir $(BUILD)-sanitize -L unit --output-on-failure -j $(JOBS)

# libFuzzer on every parser (clang, ASan + UBSan), FUZZ_SECONDS in all (docs/fuzzing.md).
FUZZ_SECONDS ?= 240
fuzz: deps assets
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(BUILD)-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DTRAIL_FUZZ=ON -DTRAIL_CUDA=OFF -DTRAIL_PYTHON=OFF -DTRAIL_BUILD_TESTS=OFF -DTRAIL_BUILD_BENCH=OFF
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_targets
	TRAIL_ASSETS=$(abspath $(BUILD))/assets scripts/fuzz.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

# Training and corpus builds SIGKILLed at random for SOAK_MINUTES (default 30), then compared
# with uninterrupted ones.
soak: build assets
	scripts/soak.sh $(BUILD)

# The main job on real text: reference bits, corpus factory, tokenizer, shards, the tiny model
# trained a few hundred steps with a trajectory hash, and a replay of its last segment.
demo: build assets
	scripts/demo.sh $(BUILD)

# GEMM against OpenBLAS, int8 against fp32 (medians of interleaved runs); attention and
# cross-entropy time per token; the data stream's assembly rate and seek time on a 1 GB corpus;
# the Python package's ops against numpy.
bench: build assets peers
	bench/run_gemm_bench.sh $(BUILD)
	$(BUILD)/bench/ops_bench
	$(BUILD)/bench/stream_bench
	bench/run_tokenizer_bench.sh $(BUILD)
	$(BUILD)/bench/corpus_bench $(BUILD)/assets/text/kjv.txt
	bench/run_corpus_bench.sh $(BUILD)
	bench/run_corpus_datatrove_bench.sh $(BUILD)
	bench/run_train_bench.sh $(BUILD)
	bench/run_dist_bench.sh $(BUILD)
	bench/run_generate_bench.sh $(BUILD)
	bench/run_python_bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
