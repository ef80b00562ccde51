# trail: the two commands that matter are `make demo` and `make test`. Both install what is
# missing (Debian packages, as root), configure, build, then run.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build assets test test-exhaustive demo bench clean

all: build

deps:
	scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Reference tokenizer files, the reference encoder and real text (pinned, hash-checked, not committed).
assets: deps
	scripts/fetch-assets.sh $(BUILD)/assets

# Unit tests, the golden-hash suite on every SIMD target and thread count, and the same golden
# hashes from an aarch64 build under qemu-aarch64.
test: build assets
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The elementary functions over all 2^32 inputs each (several minutes).
test-exhaustive: build
	TRAIL_MATH_SWEEP_STRIDE=1 $(BUILD)/src/repops/repops_test --gtest_filter='MathAccuracy.*'

# The main job on real text: reference bits, corpus factory, tokenizer, shards, the tiny model
# trained a few hundred steps with a trajectory hash, and a replay of its last segment.
demo: build assets
	scripts/demo.sh $(BUILD)

# GEMM against OpenBLAS, int8 against fp32 (medians of interleaved runs); attention and
# cross-entropy time per token; the data stream's assembly rate and seek time on a 1 GB corpus.
bench: build assets
	bench/run_gemm_bench.sh $(BUILD)
	$(BUILD)/bench/ops_bench
	$(BUILD)/bench/stream_bench
	bench/run_tokenizer_bench.sh $(BUILD)
	$(BUILD)/bench/corpus_bench $(BUILD)/assets/text/kjv.txt
	bench/run_corpus_bench.sh $(BUILD)
	bench/run_train_bench.sh $(BUILD)
	bench/run_dist_bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
