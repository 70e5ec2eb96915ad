# pacer — build, test, demo, bench.  GNU make + pkg-config, C17.
#
#   make            build ./pacer
#   make demo       the README's first command: a short self-contained run
#   make test       the README's second command: every test (installs missing
#                   Debian packages first via scripts/deps.sh)
#   make bench      measurements of pacer beside wrk (not a test)
#   make image      the container image (Containerfile) with podman, its base
#                   from Debian's archive (scripts/image.sh; IMAGE=TAG)
#   make man        man pages and bash completion, generated from the option tables
#   make changelog  CHANGELOG.md from the git history, grouped by issue
#   make format     clang-format the lines you changed (format-check: count
#                   what a whole-tree format would change; docs/testing.md)
#   make install    PREFIX=/usr/local DESTDIR=: binary, man pages, completion, docs,
#                   examples (make uninstall removes them)
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
# HTTP/3: QUIC by ngtcp2 with its GnuTLS crypto (Debian's OpenSSL 3.0 has no
# QUIC API), HTTP/3 framing by nghttp3
# LuaJIT (pacer run -s: scripts; src/script)
PKGS := yaml-0.1 jansson libssl libcrypto zlib sqlite3 libnghttp2 libngtcp2 libngtcp2_crypto_gnutls libnghttp3 gnutls luajit
CPPFLAGS += $(shell pkg-config --cflags $(PKGS) 2>/dev/null || echo -I/usr/include/luajit-2.1)
LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lyaml -ljansson -lssl -lcrypto -lz -lsqlite3 -lnghttp2 -lngtcp2_crypto_gnutls -lngtcp2 -lnghttp3 -lgnutls -lluajit-5.1) -lm

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

.PHONY: image all man install uninstall changelog deps demo test test-unit build-unit test-fuzz-replay test-integration test-san bench fuzz fuzz-build clean format format-check format-all check-layers
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
# tests/common/ holds the headers every kind of test shares (CHECK, temp
# folders), included as "common/....h".
TEST_HDRS := $(wildcard tests/common/*.h tests/unit/*/*.h tests/fuzz/*.h)
TEST_CPPFLAGS := -Itests

$(BUILD)/tests/unit/%: tests/unit/%.c $(TEST_HDRS) $(CLI_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CMOCKA_CFLAGS) $(CFLAGS) -o $@ $< $(CLI_LIB) $(LIB) $(LDFLAGS) $(CMOCKA_LIBS) $(LDLIBS)

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# Fuzz harnesses built with a plain main() that replays the corpus files
# given on the command line (tests/fuzz/replay_main.c); `make fuzz` builds the
# libFuzzer versions with clang.
$(BUILD)/tests/fuzz/%-replay: tests/fuzz/%.c tests/fuzz/replay_main.c $(TEST_HDRS) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDFLAGS) $(LDLIBS)

# Man pages and the bash completion are rendered by pacer itself from the
# option tables its --help prints (pacer --dump-man, --dump-completion), so
# they cannot drift from it.
COMMANDS := run ramp bench compare serve demo calibrate table import report merge k8s history diff
GEN := $(BUILD)/gen
MAN_PAGES := $(GEN)/pacer.1 $(COMMANDS:%=$(GEN)/pacer-%.1)
COMPLETION := $(GEN)/pacer.bash

man: $(MAN_PAGES) $(COMPLETION)

$(GEN)/pacer.1: $(BUILD)/pacer
	@mkdir -p $(@D)
	$< --dump-man > $@.tmp && mv -f $@.tmp $@

$(GEN)/pacer-%.1: $(BUILD)/pacer
	@mkdir -p $(@D)
	$< --dump-man $* > $@.tmp && mv -f $@.tmp $@

$(COMPLETION): $(BUILD)/pacer
	@mkdir -p $(@D)
	$< --dump-completion > $@.tmp && mv -f $@.tmp $@

# GNU conventions: PREFIX (prefix), DESTDIR for staged installs.
PREFIX ?= /usr/local
prefix ?= $(PREFIX)
bindir ?= $(prefix)/bin
datarootdir ?= $(prefix)/share
mandir ?= $(datarootdir)/man
man1dir ?= $(mandir)/man1
docdir ?= $(datarootdir)/doc/pacer
bashcompdir ?= $(datarootdir)/bash-completion/completions
INSTALL ?= install

install: $(BUILD)/pacer man
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(bashcompdir) \
	  $(DESTDIR)$(docdir)/docs/schema
	$(INSTALL) -m 755 $(BUILD)/pacer $(DESTDIR)$(bindir)/pacer
	$(INSTALL) -m 644 $(MAN_PAGES) $(DESTDIR)$(man1dir)/
	$(INSTALL) -m 644 $(COMPLETION) $(DESTDIR)$(bashcompdir)/pacer
	$(INSTALL) -m 644 README.md LICENSE CHANGELOG.md $(DESTDIR)$(docdir)/
	$(INSTALL) -m 644 docs/*.md $(DESTDIR)$(docdir)/docs/
	$(INSTALL) -m 644 docs/schema/* $(DESTDIR)$(docdir)/docs/schema/
	cd examples && find . -type d -exec $(INSTALL) -d $(DESTDIR)$(docdir)/examples/{} \; \
	  && find . -type f -exec $(INSTALL) -m 644 {} $(DESTDIR)$(docdir)/examples/{} \;

uninstall:
	rm -f $(DESTDIR)$(bindir)/pacer $(DESTDIR)$(bashcompdir)/pacer
	rm -f $(DESTDIR)$(man1dir)/pacer.1 $(COMMANDS:%=$(DESTDIR)$(man1dir)/pacer-%.1)
	rm -rf $(DESTDIR)$(docdir)

# CHANGELOG.md from the git history, grouped by issue.
changelog:
	@scripts/changelog.py CHANGELOG.md

deps:
	@scripts/deps.sh

test: deps
	@scripts/run-tests.sh

test-unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

# the unit test binaries alone, built (make test tells a build that fails
# from tests that fail)
build-unit: $(UNIT_BINS)

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

# pacer's container image, built by podman from Debian packages only
# (docs/distributed.md): scripts/image.sh, its bases cached between runs.
image: deps
	@scripts/image.sh $(IMAGE)

# libFuzzer builds (clang): the library compiled once with the fuzzer's
# coverage and ASan+UBSan (undefined behaviour aborts, as an ASan error
# does, so that the fuzzer stops at it and keeps the input), each harness
# linked against it. `make fuzz` then
# runs every harness for FUZZ_SECONDS (default 600) on a scratch copy of its
# corpus and reports the executions per harness (scripts/run-fuzz.sh);
# `make test` runs each for a few seconds (FUZZ_CI_SECONDS).
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 600
FUZZ_SAN := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=c17 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/libpacer-fuzz.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(TEST_HDRS) $(FUZZ_BUILD)/libpacer-fuzz.a
	clang $(CPPFLAGS) $(TEST_CPPFLAGS) -std=c17 $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libpacer-fuzz.a $(LDLIBS) -pthread

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf build pacer

# clang-format with the checked-in .clang-format, the style of the code as
# it is. `make format` formats only the lines that differ from FORMAT_BASE
# (default HEAD: what is not committed yet; FORMAT_BASE=main: the whole
# branch, where a moved file counts as new), so a change is formatted
# without reformatting the code around it (git clang-format, Debian package
# clang-format). `make format-check` changes nothing: it counts, per file,
# the lines a whole-tree format would change. `make format-all` is that
# whole-tree format.
FORMAT_BASE ?= HEAD
FORMAT_SRCS = $(shell git ls-files 'src/*.[ch]' 'tests/*.[ch]')

format:
	@command -v git-clang-format >/dev/null || { echo "make format: git-clang-format not found (make deps installs clang-format)" >&2; exit 2; }
	git clang-format --binary clang-format --extensions c,h $(FORMAT_BASE) -- src tests

format-check:
	@scripts/format-check.sh $(FORMAT_SRCS)

format-all:
	clang-format -i $(FORMAT_SRCS)

-include $(shell find build -name '*.d' 2>/dev/null)

print-unit-bins:
	@echo $(UNIT_BINS)
