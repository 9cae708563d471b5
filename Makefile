# plc: the parallel-layout compiler (bin/plc) and its runtime (bin/plrun).
#
#   make                 build bin/plc and bin/plrun (CUDA backend too when nvcc is found)
#   make test            unit tests (CUnit), the determinism checks under each
#                        OpenBLAS core type the CPU runs, end-to-end tests; no GPU
#   make test SANITIZE=1 the same under ASan + UBSan (objects in build-san/)
#   make run             the main job: train examples/tiny.plan on CPU across ranks
#   make bench           benchmarks, printing figures
#   make deps            install what a fresh Debian machine lacks (apt-get)
#   make install         bin/, share/plc/catalog.yaml and man pages under
#                        $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall
#   make install-plc     plc alone (its catalog, engine profiles and man
#                        pages): builds neither plrun nor anything needing
#                        MPI, OpenBLAS or CUDA; plc needs only libyaml
#   make fuzz            libFuzzer harnesses, FUZZ_SECONDS each (fuzz/fuzz.mk)
#
# Sources are found by wildcard: a new .c file in a module directory is built
# without touching this file. Unit tests are tests/unit/test_NAME.c, each
# defining `void register_test_NAME(void)` (the registry is generated).

SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD   ?= build-san
BIN     ?= build-san/bin
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CUDA    ?= 0
export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
export ASAN_OPTIONS = abort_on_error=0:detect_odr_violation=0
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
else
BUILD   ?= build
BIN     ?= bin
SANFLAGS =
endif

CC      ?= gcc
ifeq ($(origin CC),default)
CC = gcc
endif
OPT     ?= -O2
CFLAGS_COMMON = -std=c11 $(OPT) -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
                -Iinclude -I. -I$(BUILD)/gen $(SANFLAGS)
CFLAGS  ?=
ALL_CFLAGS = $(CFLAGS_COMMON) $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

# External libraries, found through pkg-config / mpicc where possible.
YAML_LIBS  := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
CUNIT_LIBS := $(shell pkg-config --libs cunit 2>/dev/null || echo -lcunit)
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null)
OMP_FLAGS  := -fopenmp

# MPI as root on a small machine: the make targets pass these.
MPIRUN ?= mpirun --allow-run-as-root --oversubscribe
export PLC_MPIRUN = $(MPIRUN)

# CUDA backend: built when nvcc exists (CUDA=0 turns it off).
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(NVCC),)
CUDA ?= 0
endif
CUDA ?= 1
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVCC_FLAGS = -std=c++17 -O2 -g -Iinclude -I. \
             -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror

# ---- sources ---------------------------------------------------------------
COMMON_SRC   := $(wildcard common/*.c)
# compiler/ is laid out by stage: frontend/ (whose flex and bison sources
# are the top-level grammar/), solver/,
# lower/, plantools/, cli/ (object paths follow the source paths, so names
# stay unique)
COMPILER_SRC := $(filter-out compiler/cli/main.c,$(wildcard compiler/*.c compiler/*/*.c))
RUNTIME_SRC  := $(filter-out runtime/main.c,$(wildcard runtime/*.c)) $(wildcard kernels/cpu/*.c)
CUDA_SRC     := $(if $(filter 1,$(CUDA)),$(wildcard kernels/cuda/*.cu))
TEST_SRC     := $(wildcard tests/unit/test_*.c)
BENCH_SRC    := $(wildcard bench/*.c)

GRAMMAR := grammar
GRAMMAR_Y := $(wildcard $(GRAMMAR)/*.y)
GRAMMAR_L := $(wildcard $(GRAMMAR)/*.l)
GEN_C := $(patsubst $(GRAMMAR)/%.y,$(BUILD)/gen/%.tab.c,$(GRAMMAR_Y)) \
         $(patsubst $(GRAMMAR)/%.l,$(BUILD)/gen/%.lex.c,$(GRAMMAR_L))
GEN_H := $(GEN_C:.c=.h)

obj = $(patsubst %,$(BUILD)/obj/%.o,$(basename $(1)))
COMMON_OBJ   := $(call obj,$(COMMON_SRC))
COMPILER_OBJ := $(call obj,$(COMPILER_SRC)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_C))
RUNTIME_OBJ  := $(call obj,$(RUNTIME_SRC)) $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(CUDA_SRC))
TEST_OBJ     := $(call obj,$(TEST_SRC) tests/unit/main.c) $(BUILD)/obj/gen/test_registry.o

ifeq ($(CUDA),1)
CUDA_DEFS = -DPLC_HAVE_CUDA=1 -I$(CUDA_HOME)/include
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lnccl -lcudart -lstdc++
endif

# the catalog's directory as seen from the binaries' one: plc finds its
# built-in catalog relative to itself (compiler/paths.h), never by a fixed path
TREE_DATADIR := $(shell realpath -m --relative-to=$(BIN) examples)

RUNTIME_CFLAGS = $(MPI_CFLAGS) $(BLAS_CFLAGS) $(OMP_FLAGS) $(CUDA_DEFS)
RUNTIME_LIBS   = $(MPI_LIBS) $(BLAS_LIBS) $(CUDA_LIBS) $(OMP_FLAGS) -lm
COMPILER_LIBS  = $(YAML_LIBS) -lm

.PHONY: all test unit e2e test-determinism run bench error-bars deps clean install install-plc uninstall FORCE
.SECONDARY: $(GEN_C) $(GEN_H)
.DEFAULT_GOAL := all
all: $(BIN)/plc $(BIN)/plrun

# ---- compile rules ---------------------------------------------------------
$(BUILD)/obj/common/%.o: common/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/compiler/%.o: compiler/%.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPLC_TREE_DATADIR='"$(TREE_DATADIR)"' -MMD -MP -c $< -o $@

$(BUILD)/obj/runtime/%.o: runtime/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(RUNTIME_CFLAGS) -MMD -MP -c $< -o $@

# The kernels never read errno: without it a square root in a vector loop
# is one instruction (results are the same: IEEE sqrt is correctly rounded).
$(BUILD)/obj/kernels/%.o: kernels/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(RUNTIME_CFLAGS) -fno-math-errno -MMD -MP -c $< -o $@

$(BUILD)/obj/kernels/%.cu.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(RUNTIME_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/bench/%.o: bench/%.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(RUNTIME_CFLAGS) -MMD -MP -c $< -o $@

# the commit plc is built from, for plc --version: rewritten only when it
# changes (so plc is relinked then and only then); "unknown" outside git
PLC_COMMIT := $(shell git -C '$(CURDIR)' describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
$(BUILD)/gen/plc_commit.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define PLC_COMMIT "$(PLC_COMMIT)"' >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/obj/compiler/cli/main.o: $(BUILD)/gen/plc_commit.h
FORCE:

# generated parser and scanner (never committed)
$(BUILD)/gen/%.tab.c $(BUILD)/gen/%.tab.h: $(GRAMMAR)/%.y
	@mkdir -p $(dir $@)
	bison -Wall -Werror --defines=$(BUILD)/gen/$*.tab.h -o $(BUILD)/gen/$*.tab.c $<

$(BUILD)/gen/%.lex.c $(BUILD)/gen/%.lex.h: $(GRAMMAR)/%.l $(patsubst $(GRAMMAR)/%.y,$(BUILD)/gen/%.tab.h,$(GRAMMAR_Y))
	@mkdir -p $(dir $@)
	flex --header-file=$(BUILD)/gen/$*.lex.h -o $(BUILD)/gen/$*.lex.c $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Icompiler -Wno-unused-function -Wno-sign-compare -MMD -MP -c $< -o $@

$(BUILD)/gen/test_registry.c: $(TEST_SRC) Makefile
	@mkdir -p $(dir $@)
	@{ echo '/* generated by make from tests/unit/test_*.c */'; \
	   for f in $(notdir $(basename $(TEST_SRC))); do echo "void register_$$f(void);"; done; \
	   echo 'void plc_register_all_tests(void);'; \
	   echo 'void plc_register_all_tests(void) {'; \
	   for f in $(notdir $(basename $(TEST_SRC))); do echo "    register_$$f();"; done; \
	   echo '}'; } > $@

# ---- link rules ------------------------------------------------------------
$(BUILD)/libplc_common.a: $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libplc_compiler.a: $(COMPILER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libplc_runtime.a: $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

LIBS_COMPILER = $(BUILD)/libplc_compiler.a $(BUILD)/libplc_common.a
LIBS_RUNTIME  = $(BUILD)/libplc_runtime.a $(BUILD)/libplc_common.a
LIBS_ALL      = $(BUILD)/libplc_compiler.a $(BUILD)/libplc_runtime.a $(BUILD)/libplc_common.a

$(BIN)/plc: $(BUILD)/obj/compiler/cli/main.o $(LIBS_COMPILER)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(COMPILER_LIBS)

$(BIN)/plrun: $(BUILD)/obj/runtime/main.o $(LIBS_RUNTIME)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RUNTIME_LIBS)

$(BIN)/unit_tests: $(TEST_OBJ) $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJ) $(LIBS_ALL) $(CUNIT_LIBS) $(COMPILER_LIBS) $(RUNTIME_LIBS)

$(BIN)/bench_%: $(BUILD)/obj/bench/%.o $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIBS_ALL) $(COMPILER_LIBS) $(RUNTIME_LIBS)

# ---- user targets ----------------------------------------------------------
unit: $(BIN)/unit_tests all
	cd tests && ../$(BIN)/unit_tests

# bench_schedules: tests/e2e/fidelity_schedules.sh runs the schedule simulator through it
e2e: all $(BIN)/bench_schedules
	PLC_BIN=$(CURDIR)/$(BIN) tests/run_e2e.sh

# the determinism checks again under each OpenBLAS core type the CPU can run
test-determinism: all $(BIN)/unit_tests
	PLC_BIN=$(CURDIR)/$(BIN) tests/run_determinism.sh

test: all $(BIN)/unit_tests
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory test-determinism
	$(MAKE) --no-print-directory e2e

RUN_RANKS ?= 4
run: all
	@mkdir -p $(BUILD)/run
	$(BIN)/plc check examples/tiny.plan
	$(BIN)/plc compile examples/tiny.plan -D layout.dp=$(RUN_RANKS) -D cluster.gpus_per_node=$(RUN_RANKS) -o $(BUILD)/run/tiny.bin
	$(MPIRUN) -np $(RUN_RANKS) $(BIN)/plrun $(BUILD)/run/tiny.bin --metrics $(BUILD)/run/metrics.jsonl

BENCH_BINS := $(patsubst bench/%.c,$(BIN)/bench_%,$(BENCH_SRC))
bench: all $(BENCH_BINS)
	PLC_BIN=$(CURDIR)/$(BIN) bench/run.sh

# the error-bar table plc solve and explain read, from the out-of-sample
# residuals of calibration/ (docs/solver.md, "Error bars"; a few minutes)
error-bars: $(BIN)/plc
	PLC_BIN=$(CURDIR)/$(BIN) bench/fidelity --error-bars examples/error_bars.csv

deps:
	scripts/install-deps.sh

# installed layout: PREFIX/bin/{plc,plrun}, PREFIX/share/plc/{catalog,engines}.yaml
# (found by plc as ../share/plc from its own directory, so a copied prefix
# keeps working), PREFIX/share/man. install-plc installs plc's part alone:
# bin/plc, the catalog, the engine profiles, plc(1) and plan(5); install adds
# plrun and plrun(1).
# Programs are installed stripped (no debug info, hence no build path);
# INSTALL_PROGRAM='install -m 755' keeps the debug info.
PREFIX ?= /usr/local
INSTALL_PROGRAM ?= install -s -m 755
MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)
PLC_MAN1 := man/plc.1
install-plc: $(BIN)/plc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/plc \
	    $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	$(INSTALL_PROGRAM) $(BIN)/plc $(DESTDIR)$(PREFIX)/bin/
	install -m 644 examples/catalog.yaml $(DESTDIR)$(PREFIX)/share/plc/catalog.yaml
	install -m 644 examples/engines.yaml $(DESTDIR)$(PREFIX)/share/plc/engines.yaml
	install -m 644 examples/error_bars.csv $(DESTDIR)$(PREFIX)/share/plc/error_bars.csv
	install -m 644 $(PLC_MAN1) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(MAN5) $(DESTDIR)$(PREFIX)/share/man/man5/

install: all install-plc
	$(INSTALL_PROGRAM) $(BIN)/plrun $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(filter-out $(PLC_MAN1),$(MAN1)) $(DESTDIR)$(PREFIX)/share/man/man1/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/plc $(DESTDIR)$(PREFIX)/bin/plrun \
	    $(DESTDIR)$(PREFIX)/share/plc/catalog.yaml $(DESTDIR)$(PREFIX)/share/plc/engines.yaml \
	    $(DESTDIR)$(PREFIX)/share/plc/error_bars.csv \
	    $(patsubst man/%,$(DESTDIR)$(PREFIX)/share/man/man1/%,$(MAN1)) \
	    $(patsubst man/%,$(DESTDIR)$(PREFIX)/share/man/man5/%,$(MAN5))
	-rmdir $(DESTDIR)$(PREFIX)/share/plc 2>/dev/null
include fuzz/fuzz.mk

clean:
	rm -rf build build-san build-fuzz bin

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
