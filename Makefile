# soft-MetaRoCE top-level Makefile.
#   make            build the module (for Debian's 6.1 kernel) and the provider
#   make demo       install what is missing, build, boot a guest, show devices
#   make check      install what is missing and run the quick tier of the
#                   tests (about 20 minutes; selftests/README.md, "Tiers")
#   make check-full every test on both guest kernels (a release; a change
#                   to locking, lifetimes or memory handling)
#   make coverage   which functions of metaroce.ko the quick tier reaches on
#                   the debug kernel, against the full suite (scripts/coverage)
#   make install    install module, provider, driver file and the Wireshark
#                   dissector (DESTDIR-aware; depmod only without DESTDIR)
#   make dkms-install   install the module through DKMS (rebuilt for every
#                   kernel); dkms-uninstall removes it
#   make bench      metaroce vs rxe vs TCP under netem loss, in one guest
#                   (KERNEL=stock|debug); table in build/bench/
#   make conformance   the conformance suite (userspace/conformance/cases)
#                   on the host target, then on a live device in the guest;
#                   a table per section of protocol.rst (conformance.rst)
#   make scale      the ns-3 scale model (build/scale/mr-scale); its short
#                   run is `make scale-check`, its tables `make scale-tables`
#   make tools-test the host tests of the tools: dissector-test, install-test,
#                   dkms-test, plot-test, host-run-test, json-test,
#                   spec-check-test (each ends "N passed, N failed")
#   make spec-check protocol.rst's byte-layout tables agree with the codec
#                   (kernel/proto/wire.c; scripts/spec-check, in make check)
# KDIR= builds the module against another kernel tree.

TOP := $(CURDIR)
BUILD := $(TOP)/build
KVER ?= $(shell find /boot -maxdepth 1 -name 'vmlinuz-6.1*-amd64' -printf '%f\n' 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
KERNEL ?= stock
MODULE_FLAGS ?= W=1

.PHONY: all deps module module-debug test-kernel userspace guest-artifacts \
	install check check-full coverage demo bench checkpatch unit-tests clean \
	dkms-source dkms-install dkms-uninstall dissector-test install-test dkms-test \
	plot-test host-run-test json-test tools-test scale scale-check scale-tables conformance \
	engine-test mutate-engines spec-check spec-check-test

all: module userspace

deps:
	@scripts/install-deps

# Kbuild writes objects next to the sources, so each kernel gets a mirror
# of symlinks under build/ and the work tree stays clean.
define build_module
	@mkdir -p $(2)
	@cp -rsf $(TOP)/kernel $(TOP)/uapi $(2)/
	@find $(2)/kernel $(2)/uapi -xtype l -delete
	+$(MAKE) -C $(1) M=$(2)/kernel $(MODULE_FLAGS) modules
	@cp -u $(2)/kernel/*.ko $(2)/
endef

module:
	$(call build_module,$(KDIR),$(BUILD)/stock)

test-kernel:
	@selftests/kernel/build-test-kernel.sh >/dev/null

module-debug: test-kernel
	$(call build_module,$(shell selftests/kernel/build-test-kernel.sh),$(BUILD)/debug)

userspace:
	$(MAKE) -C userspace
	$(MAKE) -C userspace/conformance

# What selftests/run puts into the guest for KERNEL=stock|debug.
guest-artifacts: userspace $(if $(filter debug,$(KERNEL)),module-debug,module)

# Host-side unit tests: the provider, and the pure protocol units in
# kernel/proto/ built for userspace.
unit-tests:
	$(MAKE) -C userspace test
	$(if $(wildcard kernel/proto/tests/Makefile),$(MAKE) -C kernel/proto/tests)

# The engines of kernel/proto/ on the host, over an in-memory lossy link
# (seconds; part of unit-tests).
engine-test:
	$(MAKE) -C kernel/proto/tests engine

# Small deliberate bugs in the engines, one at a time: do the engine tests
# catch each? (scripts/mutate-engines; about 3 minutes, not in check)
mutate-engines:
	@scripts/mutate-engines

# protocol.rst's tables against wire.c, field by field (a stage of check).
spec-check:
	@scripts/spec-check

# What `make` built, for KVER: the module in updates/ (ahead of any in-tree
# module of that name), the provider, its driver file, the CLI (userspace/
# install has its hook) and the dissector. With DESTDIR, a staged tree:
# depmod then runs where the tree is unpacked, not here.
install: module userspace
	install -D -m 644 $(BUILD)/stock/metaroce.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/metaroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace install DESTDIR=$(DESTDIR)
	$(MAKE) -C userspace/wireshark install DESTDIR=$(DESTDIR)

# DKMS: dkms builds the module from a copy of kernel/ and uapi/ in
# $(DKMS_SRC_DIR)/metaroce-$(DKMS_VERSION), with dkms.conf, for KVER now and
# for every kernel installed later (AUTOINSTALL). The version is the newest
# vX.Y tag (git describe, "-" made "."), else 0.0.g<commit>, ".dirty" with
# uncommitted changes; 0.0 outside git.
DKMS_SRC_DIR ?= /usr/src
ifndef DKMS_VERSION
DKMS_VERSION := $(shell \
	if v=$$(git -C $(TOP) describe --tags --dirty --match 'v[0-9]*' 2>/dev/null); then \
		echo "$${v#v}" | tr - .; \
	elif h=$$(git -C $(TOP) rev-parse --short HEAD 2>/dev/null); then \
		git -C $(TOP) diff --quiet HEAD 2>/dev/null && echo "0.0.g$$h" || echo "0.0.g$$h.dirty"; \
	else echo 0.0; fi)
endif
DKMS_TREE = $(DESTDIR)$(DKMS_SRC_DIR)/metaroce-$(DKMS_VERSION)

dkms-source:
	@rm -rf $(DKMS_TREE)
	@mkdir -p $(DKMS_TREE)
	tar -C $(TOP) -c --exclude=proto/tests --exclude='*.o' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
		--exclude=modules.order --exclude=Module.symvers kernel uapi | tar -C $(DKMS_TREE) -x
	sed 's/@PACKAGE_VERSION@/$(DKMS_VERSION)/' dkms.conf >$(DKMS_TREE)/dkms.conf
	@echo "dkms source: $(DKMS_TREE)"

# Installs on this machine, for KVER (the running kernel: KVER=$$(uname -r)).
dkms-install:
	$(if $(DESTDIR),$(error dkms-install installs on this machine; DESTDIR is for dkms-source))
	$(MAKE) dkms-source DKMS_VERSION=$(DKMS_VERSION)
	dkms status -m metaroce -v $(DKMS_VERSION) | grep -q . || dkms add -m metaroce -v $(DKMS_VERSION)
	dkms install -m metaroce -v $(DKMS_VERSION) -k $(KVER)

dkms-uninstall:
	dkms remove -m metaroce -v $(DKMS_VERSION) --all
	rm -rf $(DKMS_TREE)

# Host tests of the tools; each prints "N passed, N failed[, N skipped]".
dissector-test:
	@$(MAKE) -s -C userspace/wireshark test

install-test:
	@selftests/host/test-install.sh

dkms-test:
	@selftests/host/test-dkms.sh

plot-test:
	@selftests/host/test-plot.sh

host-run-test:
	@selftests/host/test-run-host.sh

json-test:
	@selftests/host/test-json.sh

# That scripts/spec-check fails on a changed offset and passes as is.
spec-check-test:
	@scripts/spec-check --self-test

tools-test:
	@selftests/host/tools-test.sh dissector-test install-test dkms-test plot-test host-run-test json-test \
		spec-check-test

check: deps
	@scripts/check

check-full: deps
	@scripts/check --full

coverage: deps
	@scripts/coverage

demo: deps
	@selftests/run --demo

bench: deps
	@selftests/run --bench --kernel $(KERNEL)

# The scale model on ns-3 (userspace/scale/README.md). JOBS=2 runs two
# simulations at once for the tables.
# The host target first: seconds, and its failures name the rule.
conformance: deps userspace
	$(MAKE) -s -C userspace/conformance check
	@selftests/run --kernel $(KERNEL) 61-conformance

scale:
	$(MAKE) -C userspace/scale

scale-check:
	$(MAKE) -C userspace/scale check

scale-tables:
	$(MAKE) -C userspace/scale tables

# Kernel style: checkpatch --strict from Debian's linux-source tarball, as
# unpacked for the test kernel, on the files changed since their last clean
# run (scripts/checkpatch --no-cache checks every one).
checkpatch: test-kernel
	@scripts/checkpatch

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C userspace clean
