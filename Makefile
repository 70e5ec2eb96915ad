# pacer — build, test, demo, bench.  GNU make + pkg-config, C17.
#
#   make            build ./pacer
#   make demo       the README's first command: a short self-contained run
#   make test       the README's second command: every test (installs missing
#                   Debian packages first via scripts/deps.sh)
#   make bench      measurements of pacer beside wrk (not a test)
#   make SAN=1 ...  AddressSanitizer + UBSan build (objects under build/san)
#   make SAN=thread ...  ThreadSanitizer build (objects under build/tsan)

VERSION := 0.1.0
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

CC ?= cc
ifeq ($(SAN),1)
BUILD ?= build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1
else ifeq ($(SAN),thread)
BUILD ?= build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT := -O1
else
BUILD ?= build/rel
SANFLAGS :=
OPT := -O2
endif

WARN := -Wall -Wextra -Wshadow -Wpedantic -Werror -Wno-error=unused-function
CPPFLAGS += -Isrc -D_GNU_SOURCE -DPACER_VERSION=\"$(VERSION)\" -DPACER_COMMIT=\"$(COMMIT)\"
CFLAGS += -std=c17 $(OPT) -g $(WARN) -pthread $(SANFLAGS) -MMD -MP
LDFLAGS += -pthread $(SANFLAGS)
LDLIBS += $(shell pkg-config --libs yaml-0.1 jansson libssl libcrypto zlib 2>/dev/null || echo -lyaml -ljansson -lssl -lcrypto -lz) -lm

CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRCS := $(sort $(shell find src -name '*.c' ! -path 'src/cli/*'))
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
LIB := $(BUILD)/libpacer.a
# The CLI's pieces other than main(), for unit tests of option parsing.
CLI_LIB := $(BUILD)/libpacer-cli.a

UNIT_SRCS := $(sort $(shell find tests/unit -name 'test_*.c' 2>/dev/null))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%-replay)

.PHONY: all deps demo test test-unit test-fuzz-replay test-integration test-san bench fuzz fuzz-build clean format check-layers
all: pacer

pacer: $(BUILD)/pacer
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/pacer: $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(CLI_LIB): $(filter-out $(BUILD)/src/cli/main.o,$(CLI_OBJS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Test-local headers (fixtures, shared checks) are listed outright: the
# one-step compile-and-link of a test leaves no usable dependency file.
TEST_HDRS := $(wildcard tests/unit/*/*.h tests/fuzz/*.h)

$(BUILD)/tests/unit/%: tests/unit/%.c $(TEST_HDRS) $(CLI_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CMOCKA_CFLAGS) $(CFLAGS) -o $@ $< $(CLI_LIB) $(LIB) $(LDFLAGS) $(CMOCKA_LIBS) $(LDLIBS)

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# Fuzz harnesses built with a plain main() that replays the corpus files
# given on the command line (tests/fuzz/replay_main.c); `make fuzz` builds the
# libFuzzer versions with clang.
$(BUILD)/tests/fuzz/%-replay: tests/fuzz/%.c tests/fuzz/replay_main.c $(TEST_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDFLAGS) $(LDLIBS)

deps:
	@scripts/deps.sh

test: deps
	@scripts/run-tests.sh

test-unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

test-fuzz-replay: $(FUZZ_REPLAY)
	@scripts/run-fuzz-replay.sh $(BUILD)

tools: $(TOOL_BINS)

# The include graph of src/ has no cycle and plan, stats, http, report have
# no sockets, threads or clocks (DESIGN.md section 3). With
# LAYERS_OBJECTS=1 also the calls between the files of each module.
check-layers: $(if $(LAYERS_OBJECTS),$(LIB))
	@scripts/check-layers.py $(if $(LAYERS_OBJECTS),--objects $(BUILD))

test-integration: pacer tools
	@scripts/run-integration.sh $(BUILD)

demo: deps pacer
	./pacer demo

bench: deps pacer
	@bench/run.sh

# libFuzzer builds (clang): the library compiled once with the fuzzer's
# coverage and ASan+UBSan, each harness linked against it. `make fuzz` then
# runs every harness for FUZZ_SECONDS (default 600) on a scratch copy of its
# corpus and reports the executions per harness (scripts/run-fuzz.sh);
# `make test` runs each for a few seconds (FUZZ_CI_SECONDS).
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 600
FUZZ_SAN := -g -O1 -fsanitize=address,undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=c17 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/libpacer-fuzz.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(TEST_HDRS) $(FUZZ_BUILD)/libpacer-fuzz.a
	clang $(CPPFLAGS) -std=c17 $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libpacer-fuzz.a $(LDLIBS) -pthread

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf build pacer

format:
	clang-format -i $$(find src tests -name '*.[ch]')

-include $(shell find build -name '*.d' 2>/dev/null)

print-unit-bins:
	@echo $(UNIT_BINS)
