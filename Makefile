# smx2d-sim build. `make run` and `make test` are the two commands of the README.
# Everything builds into build/; `make dist` writes a relocatable tree into dist/.

VERSION      := 0.1.0
# `make MPI=1`: an MPI build (Open MPI's mpicc wrapper flags; docs/mpi.md), in
# build-mpi/ unless BUILD says otherwise; without it the binary has no MPI.
MPI          ?= 0
BUILD        ?= $(if $(filter 1,$(MPI)),build-mpi,build)
CC           ?= cc
NVCC         ?= nvcc

# CUDA is built when nvcc is found; `make CUDA=0` switches it off.
ifeq ($(origin CUDA), undefined)
CUDA := $(if $(shell command -v $(NVCC) 2>/dev/null),1,0)
endif

# GPU architectures (nvcc -gencode list): a fat binary with machine code for
# every generation CUDA 13 supports, sm_75 (Turing: T4, RTX 20xx), sm_80
# (A100), sm_86 (RTX 30xx, A40), sm_89 (L40, RTX 40xx), sm_90 (H100/H200),
# and compute_90 PTX that newer GPUs (Blackwell) JIT-compile at start-up.
# `--version` lists what a binary carries. For a faster build for one GPU:
#   make CUDA_ARCH=-gencode=arch=compute_90,code=sm_90
CUDA_ARCH    ?= -gencode=arch=compute_75,code=sm_75 \
                -gencode=arch=compute_80,code=sm_80 \
                -gencode=arch=compute_86,code=sm_86 \
                -gencode=arch=compute_89,code=sm_89 \
                -gencode=arch=compute_90,code=sm_90 \
                -gencode=arch=compute_90,code=compute_90

PKGS         := hdf5 yaml-0.1 nettle libcjson zlib
PKG_CFLAGS    = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS      = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT          ?= -O2
CFLAGS       ?= $(OPT) -g
WARN         := -Wall -Wextra -Werror
ALL_CFLAGS    = -std=c11 -D_GNU_SOURCE $(WARN) -fopenmp $(CFLAGS) -Isrc -I$(BUILD) $(PKG_CFLAGS) \
                -DSMX_SOURCE_DATA_DIR=\"$(CURDIR)/data\"
# $ORIGIN/../lib lets the dist tree find its bundled libraries; DT_RPATH (not
# RUNPATH) so that the libraries' own dependencies are searched there too.
LDFLAGS      += -fopenmp -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib'
# Sanitizer flags for compiling and linking (`make asan` sets them); empty by default.
ifneq ($(SANITIZE),)
ALL_CFLAGS   += $(SANITIZE)
LDFLAGS      += $(SANITIZE)
endif
LDLIBS        = -lhdf5_hl $(PKG_LIBS) -lm

CUDA_HOME    ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
# --fmad=false: no implicit contraction into fused multiply-adds, so that the
# kernels round exactly like the C reference (same operations in the same order
# give the same bits); where both want an FMA they say so (__fmaf_rn / fmaf,
# src/numerics/fma_rows.h).
NVCCFLAGS    ?= -O3 -lineinfo --fmad=false
ALL_NVCCFLAGS = -std=c++17 $(CUDA_ARCH) $(NVCCFLAGS) -Xcompiler -Wall,-Wextra,-Werror \
                -Werror all-warnings -Isrc -I$(BUILD)

# src/ is one folder per layer (docs/dev/architecture.md); main.c alone sits on top.
# src/parallel/ has one implementation with MPI and one without.
PAR_UNUSED   := src/parallel/parallel_$(if $(filter 1,$(MPI)),none,mpi).c
LIB_SRC      := $(filter-out $(PAR_UNUSED),$(wildcard src/*/*.c))
LIB_OBJ      := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
CU_SRC       := $(if $(filter 1,$(CUDA)),$(wildcard cuda/*.cu))
CU_OBJ       := $(CU_SRC:cuda/%.cu=$(BUILD)/obj/cuda/%.o)
TEST_SRC     := $(wildcard tests/test_*.c)
TEST_BIN     := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN          := $(BUILD)/smx2d-sim
# The program with its test seams installed (tests/hooks_main.c): what the
# command-line and MPI tests pause and fail; never installed.
HOOKS_BIN    := $(BUILD)/tests/smx2d-sim-hooks
# The memory-pattern probe (scripts/access_probe.cu, docs/tuning.md): CUDA builds only.
PROBE        := $(if $(filter 1,$(CUDA)),$(BUILD)/access-probe)
LIBSMX       := $(BUILD)/libsmx2d.a

ifeq ($(CUDA),1)
ALL_CFLAGS   += -DSMX_HAVE_CUDA=1 -I$(CUDA_HOME)/include
# cuFFT (286 MB, too large to bundle) is not linked: cuda/cufft_loader.cu
# dlopens it when the CUDA backend may use it, searching $$ORIGIN/../lib and
# then the CUDA installation's lib64 (the rpath below).
LDLIBS       += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread
LDFLAGS      += -Wl,-rpath,$(CUDA_HOME)/lib64
endif

ifeq ($(MPI),1)
MPICC        ?= mpicc
# Empty when mpicc is missing: deps-check then says what to install.
MPI_CFLAGS   := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS     := $(shell $(MPICC) --showme:link 2>/dev/null)
ALL_CFLAGS   += -DSMX_MPI=1 $(MPI_CFLAGS)
LDLIBS       += $(MPI_LIBS)
endif

.PHONY: all run test test-long test-mpi test-report update-expected test-gpu sanitize-gpu asan test-asan fuzz fuzz-build deps tables \
        dist schema clean check-layers check-format format deps-format
all: deps-check $(BIN) $(HOOKS_BIN) $(TEST_BIN) $(BUILD)/make_tables $(BUILD)/CTestTestfile.cmake $(PROBE)

# ---- dependencies -------------------------------------------------------
DEPS_ARGS    := $(if $(filter 1,$(MPI)),--mpi)
deps:
	@sh scripts/install-deps.sh $(DEPS_ARGS)
deps-check:
	@sh scripts/install-deps.sh --check-only $(DEPS_ARGS)
.PHONY: deps-check

# ---- build facts for provenance (rewritten only when they change) --------
$(BUILD)/buildinfo.h: FORCE | $(BUILD)
	@sh scripts/buildinfo.sh '$(VERSION)' '$(CC)' '$(ALL_CFLAGS)' '$(CUDA)' '$(NVCC)' '$(ALL_NVCCFLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
FORCE:

# ---- the compile flags: objects rebuild when they change (CUDA or MPI
# switched on or off in the same BUILD, a sanitizer); rewritten only then ----
$(BUILD)/cflags.stamp: FORCE | $(BUILD)
	@printf '%s\n' '$(ALL_CFLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
$(BUILD)/nvccflags.stamp: FORCE | $(BUILD)
	@printf '%s\n' '$(ALL_NVCCFLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD) $(BUILD)/tests:
	@mkdir -p $@

$(BUILD)/obj/%.o: src/%.c $(BUILD)/cflags.stamp | $(BUILD)/buildinfo.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/cuda/%.o: cuda/%.cu $(BUILD)/nvccflags.stamp | $(BUILD)/buildinfo.h
	@mkdir -p $(dir $@)
	$(NVCC) $(ALL_NVCCFLAGS) $(NVCC_FILE_FLAGS) -MMD -MP -c $< -o $@
# The fused kernel's instance groups (cuda/fused_nmax*.cu, 18 instances each)
# are most of the device code: compressed for size, as nvcc's default mode
# left them (3.4-4.5 MB each for sm_90 against 0.5 MB compressed).
$(BUILD)/obj/cuda/fused_nmax%.o: NVCC_FILE_FLAGS := -compress-mode=size

$(LIBSMX): $(LIB_OBJ) $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/main.o $(LIBSMX)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The product's main renamed, behind the test main that installs the hooks.
$(BUILD)/obj/tests/main_product.o: src/main.c $(BUILD)/cflags.stamp | $(BUILD)/buildinfo.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Dmain=smx_product_main -MMD -MP -c $< -o $@

$(HOOKS_BIN): tests/hooks_main.c $(BUILD)/obj/tests/main_product.o $(LIBSMX) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/obj/tests/main_product.o $(LIBSMX) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(LIBSMX) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Itests $< $(LIBSMX) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/make_tables: scripts/make_tables.c $(LIBSMX)
	$(CC) $(ALL_CFLAGS) $< $(LIBSMX) $(LDFLAGS) $(LDLIBS) -o $@

# CTest reads this file; each area keeps its tests in its own tests/*.cmake.
# SMX_PYTHON: the Python tests' interpreter (scripts/find-python.sh: the first
# of python3 on PATH and /usr/bin/python3 with numpy, h5py, matplotlib, scipy
# and pydicom; `make TEST_PYTHON=...` names one), looked for on every build, as
# modules may have been installed since; the file is rewritten only when it changes.
# Each test carries one label: unit (a part or the binary against its
# specification), regression (physics against an independent reference or a
# stored result), gpu (needs a GPU), report (prints figures, asserts nothing:
# left out of `make test`, run by `make test-report`); a few regressions also
# long (left out of `make test`, run by `make test-long`, which CI runs).
TEST_PYTHON  ?=
$(BUILD)/CTestTestfile.cmake: $(wildcard tests/*.cmake) Makefile scripts/find-python.sh FORCE | $(BUILD)
	@{ echo '# generated by make from tests/*.cmake'; \
	   echo 'set(SMX_ROOT "$(CURDIR)")'; \
	   echo 'set(SMX_BUILD "$(abspath $(BUILD))")'; \
	   echo 'set(SMX_CUDA $(CUDA))'; \
	   echo 'set(SMX_MPI $(MPI))'; \
	   echo "set(SMX_PYTHON \"$$(sh scripts/find-python.sh '$(TEST_PYTHON)')\")"; \
	   cat $(sort $(wildcard tests/*.cmake)); } > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

# ---- the two README commands --------------------------------------------
# They build on every core (the CUDA objects dominate); `make JOBS=1 run` builds serially.
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	$(BIN) config/quickstart.yaml --overwrite

# tests/ctest-checked.sh runs CTest and fails when a test skipped for a reason
# tests/allowed-skips.txt does not list (a missing Python module, mpirun, ...).
# CTest runs JOBS tests at once (every core; `make test JOBS=1` one at a time).
test: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	sh tests/ctest-checked.sh $(BUILD) -LE '^(report|long)$$' -j$(JOBS) $(CTEST_ARGS)

# The long regressions (label long): a contract `make test` checks already,
# again on a finer grid (docs/dev/testing.md); CI runs them after `make test`.
test-long: all
	sh tests/ctest-checked.sh $(BUILD) -L '^long$$' -j$(JOBS) $(CTEST_ARGS)

# The checks that print figures for a reader and assert nothing (label report).
test-report: all
	cd $(BUILD) && ctest -V -L '^report$$' $(CTEST_ARGS)

# The MPI build's own tests (docs/mpi.md): the binary and tests/mpi.cmake's
# programs in build-mpi/, then its MPI jobs on the CPU under mpirun; the
# rest of the suite is the same code and runs in `make test`.
MPI_BUILD    ?= build-mpi
test-mpi:
	@sh scripts/install-deps.sh --mpi
	@$(MAKE) --no-print-directory -j$(JOBS) MPI=1 BUILD=$(MPI_BUILD) deps-check \
	    $(MPI_BUILD)/smx2d-sim $(MPI_BUILD)/tests/smx2d-sim-hooks $(MPI_BUILD)/tests/test_parallel \
	    $(MPI_BUILD)/CTestTestfile.cmake
	sh tests/ctest-checked.sh $(MPI_BUILD) -R '^(mpi_|parallel$$)' $(CTEST_ARGS)

# Rewrites the stored expected results of the shipped plans
# (tests/regression/*/expected.txt) from this build's CPU runs, printing what
# changed in each; a plan whose independent checks fail (its R80 against the
# water-equivalent prediction from PSTAR, the SOBP's plateau, the warnings)
# keeps its stored result and the target fails. Read the diff.
update-expected: all
	SMX_PYTHON="$$(sh scripts/find-python.sh '$(TEST_PYTHON)')" sh tests/post.sh test_config_plans.py $(BUILD) all --update

# The include rules of docs/dev/architecture.md: layers in order (what a folder
# reaches through other headers too), *_internal headers within their module,
# no circles inside a folder; every file and function that document names is
# in the tree; and no function in src/ or cuda/ over 120 lines or with more
# than 6 host parameters outside the script's ALLOW list (sh and awk, no build).
check-layers:
	@sh scripts/check-layers.sh
	@sh scripts/check-doc-names.sh
	@sh scripts/check-function-size.sh

# The sources in the style of .clang-format (clang-format 14): check-format
# lists the files that differ and fails; format rewrites them.
deps-format:
	@sh scripts/install-deps.sh --format
check-format: deps-format
	@sh scripts/check-format.sh
format: deps-format
	@sh scripts/check-format.sh --fix

test-gpu: all
	sh tests/ctest-checked.sh $(BUILD) -L gpu $(CTEST_ARGS)

# compute-sanitizer memcheck, racecheck, synccheck and initcheck on the GPU
# tests' small cases and a short plan (needs a GPU).
sanitize-gpu: all
	sh scripts/sanitize-gpu.sh $(BUILD)/tests/test_gpu $(BIN)

# ---- sanitizers (docs/dev/testing.md) ----------------------------------------
# `make asan`: the CPU build with AddressSanitizer and UBSan in build-asan/;
# any finding stops the program (no recovery), so it fails the test that ran it.
ASAN_BUILD   ?= build-asan
ASAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_ENV     := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
                UBSAN_OPTIONS=print_stacktrace=1 SMX_TEST_QUICK=1
asan: deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(ASAN_BUILD) CUDA=0 OPT=-O1 \
	    SANITIZE='$(ASAN_FLAGS)' all
test-asan: asan
	$(ASAN_ENV) sh tests/ctest-checked.sh $(ASAN_BUILD) -LE '^report$$' -j$(JOBS) $(CTEST_ARGS)

# `make fuzz`: libFuzzer targets for the plan and table readers (fuzz/), built
# with clang into build-fuzz/ and run FUZZ_SECONDS each; a crash fails it.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
fuzz:
	@sh scripts/install-deps.sh --fuzz
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(FUZZ_BUILD) CC=clang CUDA=0 OPT=-O1 \
	    SANITIZE='$(FUZZ_FLAGS)' fuzz-build
	sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
fuzz-build: $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard fuzz/fuzz_*.c))
$(BUILD)/fuzz/%: fuzz/%.c $(LIBSMX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< $(LIBSMX) $(LDFLAGS) $(LDLIBS) -o $@

# The probe measures the memory patterns of Hopper's fused step (its own
# cp.async and cluster code): built for sm_90 alone.
PROBE_ARCH   ?= -gencode=arch=compute_90,code=sm_90
$(BUILD)/access-probe: scripts/access_probe.cu cuda/async_copy.cuh cuda/streaming.cuh cuda/common.cuh
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(PROBE_ARCH) $(NVCCFLAGS) -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings -Icuda $< -o $@

# ---- data, schema, distribution -----------------------------------------
# data/pstar_water.h5 (the default table_file) and the material library,
# data/materials/KEY.h5 for every key of src/physics/material_library.h.
MATERIAL_KEYS := water air lung adipose muscle bone_compact bone_cortical pmma \
                 polyethylene aluminium titanium graphite
tables: $(BUILD)/make_tables
	$(BUILD)/make_tables data/pstar_water.csv data/pstar_water.h5
	@for k in $(MATERIAL_KEYS); do \
	    $(BUILD)/make_tables --key $$k data/materials/$$k.csv data/materials/$$k.h5 || exit 1; \
	done

schema: $(BIN)
	$(BIN) --print-plan-schema > schemas/plan.schema.json
	$(BIN) --print-reference-plan > config/plan-reference.yaml

# An MPI build's tree also carries Open MPI's runtime (scripts/dist-mpi.sh).
DIST_DIR     ?= dist/smx2d-sim-$(VERSION)$(if $(filter 1,$(MPI)),-mpi)
dist: all
	sh scripts/make-dist.sh $(BIN) $(DIST_DIR)
	$(if $(PROBE),cp $(PROBE) $(DIST_DIR)/bin/)

clean:
	rm -rf $(BUILD) $(MPI_BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) dist

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d)
