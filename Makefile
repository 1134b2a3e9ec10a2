# stopwatchd — build, install, test.
#
#   make                      release binaries (Swift runtime linked in: they run anywhere)
#   make install              into $(DESTDIR)$(PREFIX): binaries, systemd units, sysusers.d
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

SWIFT ?= swift
BUILD_DIR ?= .build-release
SWIFT_BUILD = $(SWIFT) build -c release --static-swift-stdlib --scratch-path $(BUILD_DIR)
BINARIES = stopwatchd swctl
INSTALL ?= install

.PHONY: all build install uninstall check clean

all: build

build:
	$(SWIFT_BUILD) --product stopwatchd
	$(SWIFT_BUILD) --product swctl

install: build
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR) $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR) $(DESTDIR)$(SYSUSERS_DIR)
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

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BINARIES))
	rm -f $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/stopwatchd.service $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/stopwatchd.socket
	rm -f $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/stopwatchd.service $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/stopwatchd.socket
	rm -f $(DESTDIR)$(SYSUSERS_DIR)/stopwatchd.conf

check:
	bash .ci/run

clean:
	rm -rf .build $(BUILD_DIR) .build-tsan
