# soft-MetaRoCE top-level Makefile.
#   make            build the module (for Debian's 6.1 kernel) and the provider
#   make demo       install what is missing, build, boot a guest, show devices
#   make check      install what is missing and run every test
#   make install    install module, provider and driver file (DESTDIR-aware)
#   make bench      metaroce vs rxe vs TCP under netem loss, in one guest
#                   (KERNEL=stock|debug); table in build/bench/
#   make scale      the ns-3 scale model (build/scale/mr-scale); its short
#                   run is `make scale-check`, its tables `make scale-tables`
# KDIR= builds the module against another kernel tree.

TOP := $(CURDIR)
BUILD := $(TOP)/build
KVER ?= $(shell find /boot -maxdepth 1 -name 'vmlinuz-6.1*-amd64' -printf '%f\n' 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
KERNEL ?= stock
MODULE_FLAGS ?= W=1

.PHONY: all deps module module-debug test-kernel userspace guest-artifacts \
	install check demo bench checkpatch unit-tests clean scale scale-check scale-tables

all: module userspace

deps:
	@scripts/install-deps

# Kbuild writes objects next to the sources, so each kernel gets a mirror
# of symlinks under build/ and the work tree stays clean.
define build_module
	@mkdir -p $(2)
	@cp -rsf $(TOP)/kernel $(TOP)/uapi $(2)/
	@find $(2)/kernel $(2)/uapi -xtype l -delete
	$(MAKE) -C $(1) M=$(2)/kernel $(MODULE_FLAGS) modules
	@cp $(2)/kernel/*.ko $(2)/
endef

module:
	$(call build_module,$(KDIR),$(BUILD)/stock)

test-kernel:
	@selftests/kernel/build-test-kernel.sh >/dev/null

module-debug: test-kernel
	$(call build_module,$(shell selftests/kernel/build-test-kernel.sh),$(BUILD)/debug)

userspace:
	$(MAKE) -C userspace

# What selftests/run puts into the guest for KERNEL=stock|debug.
guest-artifacts: userspace $(if $(filter debug,$(KERNEL)),module-debug,module)

# Host-side unit tests: the provider, and the pure protocol units in
# kernel/proto/ built for userspace.
unit-tests:
	$(MAKE) -C userspace test
	$(if $(wildcard kernel/proto/tests/Makefile),$(MAKE) -C kernel/proto/tests)

install: module userspace
	install -D -m 644 $(BUILD)/stock/metaroce.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/metaroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace install DESTDIR=$(DESTDIR)

check: deps
	@scripts/check

demo: deps
	@selftests/run --demo

bench: deps
	@selftests/run --bench --kernel $(KERNEL)

# The scale model on ns-3 (userspace/scale/README.md). JOBS=2 runs two
# simulations at once for the tables.
scale:
	$(MAKE) -C userspace/scale

scale-check:
	$(MAKE) -C userspace/scale check

scale-tables:
	$(MAKE) -C userspace/scale tables

# Kernel style: checkpatch from Debian's linux-source tarball, as unpacked
# for the test kernel.
checkpatch: test-kernel
	@$(shell selftests/kernel/build-test-kernel.sh)/scripts/checkpatch.pl --strict \
		--no-tree -q \
		-f $$(find kernel uapi -name '*.[ch]')

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C userspace clean
