# fuzz/fuzz.mk: libFuzzer harnesses (included by the Makefile).
#
#   make fuzz                  every harness for FUZZ_SECONDS (default 10) each
#   make fuzz FUZZ_SECONDS=600 longer runs; the corpora grow in build-fuzz/corpus/
#
# Harnesses (fuzz/fuzz_NAME.c): spec (the front end with its semantic
# checks), plan (the plan loader), ckpt (the checkpoint loader). They are
# built with clang's -fsanitize=fuzzer plus ASan and UBSan (Debian: clang and
# libfuzzer-14-dev). Seed corpora: the example and error specs, plans
# compiled from examples/tiny.plan, a checkpoint of fuzz/seed.plan; fuzz_spec
# also gets the language's tokens (fuzz/spec.dict). A crash
# leaves build-fuzz/crash-* and fails the target; each one fixed becomes a
# file in tests/fuzz_regress/NAME/, replayed by tests/e2e/fuzz_regress.sh.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 10
FUZZ_BUILD   := build-fuzz
FUZZ_NAMES   := spec plan ckpt
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -O1 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude -I. \
                -I$(BUILD)/gen -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_LIB_SRC := $(COMMON_SRC) $(COMPILER_SRC) runtime/safetensors.c runtime/json.c runtime/file_map.c \
                runtime/ckpt_meta.c
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SRC)) \
                $(patsubst $(BUILD)/gen/%.c,$(FUZZ_BUILD)/obj/gen/%.o,$(GEN_C))
FUZZ_BINS    := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_NAMES))

$(FUZZ_BUILD)/obj/%.o: %.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Icompiler -Wno-unused-function -Wno-sign-compare -Wno-unused-but-set-variable -c $< -o $@
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(YAML_LIBS) -lm

# seed corpora, made by the built tools
$(FUZZ_BUILD)/seeds/spec: $(wildcard examples/*.plan tests/errors/*.plan)
	@mkdir -p $@
	cp $^ $@/
	@touch $@
$(FUZZ_BUILD)/seeds/plan: $(BIN)/plc examples/tiny.plan
	@mkdir -p $@
	$(BIN)/plc compile examples/tiny.plan -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D cluster.gpus_per_node=1 -o $@/one.bin >/dev/null
	$(BIN)/plc compile examples/tiny.plan -D layout.dp=2 -D layout.tp=2 -D layout.pp=2 -D layout.cp=1 -D layout.zero=1 -D layout.micro_batch=4 -o $@/eight.bin >/dev/null
	@touch $@
$(FUZZ_BUILD)/seeds/ckpt: $(BIN)/plc $(BIN)/plrun fuzz/seed.plan
	@mkdir -p $@
	$(BIN)/plc compile fuzz/seed.plan -o $(FUZZ_BUILD)/seed.bin >/dev/null
	OMP_NUM_THREADS=1 $(BIN)/plrun $(FUZZ_BUILD)/seed.bin --steps 1 --checkpoint $@/step1.safetensors >/dev/null
	@touch $@

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS) $(patsubst %,$(FUZZ_BUILD)/seeds/%,$(FUZZ_NAMES))
fuzz: fuzz-build
	@for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	    echo "fuzz_$$n: $(FUZZ_SECONDS) s"; \
	    dict=; [ -f fuzz/$$n.dict ] && dict=-dict=fuzz/$$n.dict; \
	    $(FUZZ_BUILD)/fuzz_$$n $$dict -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_BUILD)/crash-$$n- $(FUZZ_BUILD)/corpus/$$n $(FUZZ_BUILD)/seeds/$$n \
	        2>$(FUZZ_BUILD)/fuzz_$$n.log || { tail -n 60 $(FUZZ_BUILD)/fuzz_$$n.log; exit 1; }; \
	    grep -h 'stat::number_of_executed_units' $(FUZZ_BUILD)/fuzz_$$n.log; \
	done
