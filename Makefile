# relay: top-level build.
#
#   make                 release binaries into build/release/bin
#   make asan|tsan|static  the same in build/<variant>/ (static: for the VM initramfs)
#   make check           while working: release + ASan builds, lint, the unit
#                        tests and the fast integration tests (under 3 minutes)
#   make test            install what the tests need, build, run every test
#   make test-build      every variant and the unit tests (make test's builds)
#   make fuzz            each libFuzzer target FUZZ_SECONDS (600) long
#   make demo            stock vs patched PREEMPT_RT kernel under QEMU, and the report
#   make demo-model      the userspace model of the ready-list locking (seconds)
#   make capacity        stock vs patched: RT load rate meeting a latency objective
#   make bench           side-by-side benchmarks against peer tools
#   make kernels         build (or take from the cache) the stock and patched kernels
#   make kernel-debs     the same two kernels as Debian packages for test hosts
#   make kernel-selftests  boot both and run the kernel's epoll selftests
#   make install         DESTDIR=, PREFIX= (default /usr/local)
#   make deb             a Debian package (enables nothing)
#   make test-host       only the systemd test host (Debian 12 guest under QEMU)
#   make fleet INVENTORY=FILE  relay and load hosts over SSH with Ansible, merged results
#
# Each component adds to this file through its own fragment (*/*.mk).

# The tools mk/deps installs are Debian's: find those first, not what a
# version manager's shims (python3, node) put ahead of them in PATH, which
# run other versions and can cost seconds per call.
export PATH := /usr/sbin:/usr/bin:/sbin:/bin:$(PATH)

VARIANT ?= release
O       := build/$(VARIANT)
PREFIX  ?= /usr/local
DESTDIR ?=

CC      ?= gcc
PKG_CONFIG ?= pkg-config

# Libraries every C program here may use. libsystemd has no static archive in
# Debian, so the static build (for the VM initramfs) goes without it. libbpf
# (relay reads its kernel's BTF) links statically with libelf and zlib.
PKGS := libevent libevent_pthreads jansson inih openssl zlib libbpf
ifneq ($(VARIANT),static)
PKGS += libsystemd
CPPFLAGS_SYSTEMD := -DHAVE_LIBSYSTEMD=1
endif

CPPFLAGS := -D_GNU_SOURCE -Ilib $(CPPFLAGS_SYSTEMD) \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -g -pthread
LDLIBS  := -lpthread -lm

ifeq ($(VARIANT),release)
CFLAGS  += -O2
LDLIBS  += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
else ifeq ($(VARIANT),asan)
CFLAGS  += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	   -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
LDLIBS  += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
else ifeq ($(VARIANT),tsan)
CFLAGS  += -O1 -fsanitize=thread
LDFLAGS += -fsanitize=thread
LDLIBS  += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
else ifeq ($(VARIANT),fuzz)
# libFuzzer targets (tests/fuzz): clang's coverage and its sanitizers
CC      := clang
CFLAGS  += -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	   -fno-sanitize-recover=all
LDFLAGS += -fsanitize=fuzzer,address,undefined
LDLIBS  += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
else ifeq ($(VARIANT),static)
CFLAGS  += -O2
LDFLAGS += -static
LDLIBS  += $(shell $(PKG_CONFIG) --static --libs $(PKGS) 2>/dev/null)
else
$(error VARIANT must be release, asan, tsan, static or fuzz, not '$(VARIANT)')
endif

BINS :=
.PHONY: all bins release asan tsan static deps clean install test bench fuzz
all: release

deps:
	@mk/deps build

release asan tsan static: deps
	@$(MAKE) --no-print-directory VARIANT=$@ bins

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/%.a:
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

# $(call program,NAME,DIR): the program NAME from DIR/main.c, with the rest of
# DIR/*.c in an archive that the unit tests link against too.
PROGRAM_ARCHIVES :=
define program
$(1)_OBJS := $$(patsubst %.c,$$(O)/%.o,$$(filter-out $(2)/main.c,$$(wildcard $(2)/*.c)))
$$(O)/$(2)/lib$(1).a: $$($(1)_OBJS)
$$(O)/bin/$(1): $$(O)/$(2)/main.o $$(O)/$(2)/lib$(1).a $$(LIB_A)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
BINS += $$(O)/bin/$(1)
PROGRAM_ARCHIVES += $$(O)/$(2)/lib$(1).a
endef

include lib/lib.mk
include $(wildcard server/server.mk loadgen/loadgen.mk kernel/kernel.mk \
	lab/lab.mk report/report.mk deploy/deploy.mk bench/bench.mk)
include tests/tests.mk
include mk/lint.mk

bins: $(BINS)

clean:
	rm -rf build

-include $(shell find build/$(VARIANT) -name '*.d' 2>/dev/null)
