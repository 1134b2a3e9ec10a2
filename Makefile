# stopwatchd — build, install, test.
#
#   make                      release binaries (Swift runtime linked in: they run anywhere)
#   make install              into $(DESTDIR)$(PREFIX): binaries, systemd units, sysusers.d,
#                             man pages, bash/zsh/fish completions, the shipped hooks
#   make uninstall
#   make check                every test, as CI runs them
#
# Packagers: make install DESTDIR=/tmp/x PREFIX=/usr

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
# systemd looks in /usr/lib (and /usr/local/lib for local installs).
SYSTEMD_SYSTEM_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSTEMD_USER_UNIT_DIR ?= $(PREFIX)/lib/systemd/user
SYSUSERS_DIR ?= $(PREFIX)/lib/sysusers.d
MANDIR ?= $(PREFIX)/share/man
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The hooks the project ships, to link into a hook directory (docs/HOOKS.md).
HOOKS_DIR ?= $(PREFIX)/share/stopwatchd/hooks
HOOKS = notify

SWIFT ?= swift
BUILD_DIR ?= .build-release
SWIFT_BUILD = $(SWIFT) build -c release --static-swift-stdlib --scratch-path $(BUILD_DIR)
BINARIES = stopwatchd swctl
# A status bar or a key binding starts swctl for every click: fully static, it skips the
# dynamic loader (and its relocation of libstdc++) and starts about as fast as /bin/true
# (docs/PERFORMANCE.md). lld, because it does not repeat glibc's warning that static
# binaries may dlopen. Here, not in Package.swift: `unsafeFlags` there would stop other
# packages from depending on this one. The order file puts the code a one-shot swctl runs
# together at the front, so it faults in a few 64 KiB windows instead of pages spread over
# all of its code (Benchmarks/swctl-layout/order.sh regenerates it; a stale one only costs speed).
# Without the file (a tarball without Benchmarks/), the link goes on without it.
SWCTL_ORDER ?= $(CURDIR)/Benchmarks/swctl-layout/swctl.order
SWCTL_ORDERING = $(if $(wildcard $(SWCTL_ORDER)),-Xlinker '--symbol-ordering-file=$(SWCTL_ORDER)' -Xlinker --no-warn-symbol-ordering)
SWCTL_LINK ?= -Xswiftc -static-executable -Xswiftc -use-ld=lld $(SWCTL_ORDERING)
INSTALL ?= install

.PHONY: all build install uninstall check clean

all: build

build:
	$(SWIFT_BUILD) --product stopwatchd
	$(SWIFT_BUILD) --product swctl $(SWCTL_LINK)

install: build
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR) $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR) $(DESTDIR)$(SYSUSERS_DIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR) $(DESTDIR)$(FISH_COMPLETION_DIR) \
		$(DESTDIR)$(HOOKS_DIR)
	for binary in $(BINARIES); do \
		$(INSTALL) -m 0755 -s $(BUILD_DIR)/release/$$binary $(DESTDIR)$(BINDIR)/$$binary || exit 1; \
	done
	for unit in stopwatchd.service stopwatchd.socket; do \
		sed 's|@BINDIR@|$(BINDIR)|g' systemd/$$unit > $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/$$unit && \
		chmod 0644 $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/$$unit && \
		sed 's|@BINDIR@|$(BINDIR)|g' systemd/user/$$unit > $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/$$unit && \
		chmod 0644 $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/$$unit || exit 1; \
	done
	$(INSTALL) -m 0644 systemd/sysusers.d/stopwatchd.conf $(DESTDIR)$(SYSUSERS_DIR)/stopwatchd.conf
	$(INSTALL) -m 0644 man/swctl.1 $(DESTDIR)$(MANDIR)/man1/swctl.1
	$(INSTALL) -m 0644 man/stopwatchd.8 $(DESTDIR)$(MANDIR)/man8/stopwatchd.8
	$(INSTALL) -m 0644 completions/swctl.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/swctl
	$(INSTALL) -m 0644 completions/_swctl $(DESTDIR)$(ZSH_COMPLETION_DIR)/_swctl
	$(INSTALL) -m 0644 completions/swctl.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/swctl.fish
	@# bash and fish load completions by command name; swctl's files complete stopwatchd too.
	ln -sf swctl $(DESTDIR)$(BASH_COMPLETION_DIR)/stopwatchd
	ln -sf swctl.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/stopwatchd.fish
	for hook in $(HOOKS); do $(INSTALL) -m 0755 hooks/$$hook $(DESTDIR)$(HOOKS_DIR)/$$hook || exit 1; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BINARIES))
	rm -f $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/stopwatchd.service $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/stopwatchd.socket
	rm -f $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/stopwatchd.service $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/stopwatchd.socket
	rm -f $(DESTDIR)$(SYSUSERS_DIR)/stopwatchd.conf
	rm -f $(DESTDIR)$(MANDIR)/man1/swctl.1 $(DESTDIR)$(MANDIR)/man8/stopwatchd.8
	rm -f $(DESTDIR)$(BASH_COMPLETION_DIR)/swctl $(DESTDIR)$(BASH_COMPLETION_DIR)/stopwatchd $(DESTDIR)$(ZSH_COMPLETION_DIR)/_swctl
	rm -f $(DESTDIR)$(FISH_COMPLETION_DIR)/swctl.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/stopwatchd.fish
	rm -f $(addprefix $(DESTDIR)$(HOOKS_DIR)/,$(HOOKS))
	-rmdir $(DESTDIR)$(HOOKS_DIR) $(DESTDIR)$(PREFIX)/share/stopwatchd 2>/dev/null

check:
	bash .ci/run

clean:
	rm -rf .build $(BUILD_DIR) .build-tsan
