# deploy/: systemd units, the default config, the preflight check, and
# packaging.
#
#   make install   binaries, relay-preflight, man pages, units, a preset
#                  that keeps them disabled, sysusers.d and /etc/relay into
#                  DESTDIR (PREFIX=/usr/local by default; units, presets and
#                  sysusers.d go where systemd's pkg-config says)
#   make deb       build/deb/relay_<version>_<arch>.deb; enables nothing
#   make test-host [KERNEL=stock|patched]
#                  only the test-host runs: the checks on the patched (or
#                  stock) kernel package on the host clock, and the A/B
#                  scenario on both (make test runs only the checks, on the
#                  patched package)
#   make test-fleet the fleet test in full: three test hosts under Ansible,
#                  bad inventories refused, the relay host given the patched
#                  kernel package and undo.yml rebooting it back (make test
#                  skips it)
#   (make host-ab and make fleet: lab/hostab, lab/fleet)

DEPLOY_UNITDIR := $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null)
DEPLOY_UNITDIR := $(if $(DEPLOY_UNITDIR),$(DEPLOY_UNITDIR),/lib/systemd/system)
DEPLOY_SYSUSERSDIR := $(shell $(PKG_CONFIG) --variable=sysusersdir systemd 2>/dev/null)
DEPLOY_SYSUSERSDIR := $(if $(DEPLOY_SYSUSERSDIR),$(DEPLOY_SYSUSERSDIR),/usr/lib/sysusers.d)
DEPLOY_PRESETDIR := $(shell $(PKG_CONFIG) --variable=systemdsystempresetdir systemd 2>/dev/null)
DEPLOY_PRESETDIR := $(if $(DEPLOY_PRESETDIR),$(DEPLOY_PRESETDIR),/lib/systemd/system-preset)
DEPLOY_UNITS := relay.service loadgen.slice loadgen@.service
# Configuration lives in /etc whatever PREFIX is: the units name that path.
DEPLOY_ETC := /etc/relay
DEPLOY_MAN := $(wildcard server/relay.8 loadgen/loadgen.1)
DEPLOY_BIN := build/release/bin

.PHONY: deb test-host test-fleet
install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)$(PREFIX)/lib/relay $(DESTDIR)$(PREFIX)/share/relay \
		$(DESTDIR)$(DEPLOY_UNITDIR) \
		$(DESTDIR)$(DEPLOY_SYSUSERSDIR) $(DESTDIR)$(DEPLOY_PRESETDIR) \
		$(DESTDIR)$(DEPLOY_ETC)/loadgen
	install -m 0755 $(DEPLOY_BIN)/relay $(DEPLOY_BIN)/loadgen $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 deploy/preflight $(DESTDIR)$(PREFIX)/sbin/relay-preflight
	@# relay-preflight finds it in ../share/relay (relay has it built in).
	install -m 0644 deploy/kernel-markers $(DESTDIR)$(PREFIX)/share/relay/kernel-markers
	install -m 0755 deploy/quota-check $(DESTDIR)$(PREFIX)/lib/relay/quota-check
	@# The units name /usr/...; point their commands at PREFIX.
	for u in $(DEPLOY_UNITS); do \
		sed '/^Exec/s|/usr/|$(PREFIX)/|g' deploy/$$u >$(DESTDIR)$(DEPLOY_UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(DEPLOY_UNITDIR)/$$u || exit 1; \
	done
	install -m 0644 deploy/sysusers.d/relay.conf $(DESTDIR)$(DEPLOY_SYSUSERSDIR)/relay.conf
	install -m 0644 deploy/relay.preset $(DESTDIR)$(DEPLOY_PRESETDIR)/90-relay.preset
	@# Never overwrite a configuration an operator has edited.
	for f in relay.conf loadgen/smoke.conf loadgen/unix.conf; do \
		if [ -e $(DESTDIR)$(DEPLOY_ETC)/$$f ]; then \
			echo "install: keeping the existing $(DESTDIR)$(DEPLOY_ETC)/$$f"; \
		else install -m 0644 deploy/$$f $(DESTDIR)$(DEPLOY_ETC)/$$f || exit 1; fi; \
	done
	for m in $(DEPLOY_MAN); do \
		s=$${m##*.}; install -d $(DESTDIR)$(PREFIX)/share/man/man$$s && \
		install -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/ || exit 1; \
	done
	@# On a live system (no DESTDIR) make the user and tell systemd.
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemd-sysusers $(DEPLOY_SYSUSERSDIR)/relay.conf && systemctl daemon-reload; \
	fi

deb: release
	@mk/deps deploy
	deploy/mkdeb build/deb

# make test-images' steps (tests/step): the test host images, each with a
# package of relay built for it.
.PHONY: image-hostimg image-fleetimg
image-hostimg image-fleetimg: image-%:
	@tests/step --long build/$* sh -c 'mk/deps deploy && deb=$$(deploy/mkdeb build/images/$*) && \
		deploy/hostimg/image $(if $(filter fleetimg,$*),--fleet) "$$deb"'

KERNEL ?= patched
test-host:
	@RELAY_TEST_HOST=1 RELAY_TEST_HOST_KERNEL=$(KERNEL) $(MAKE) --no-print-directory test \
		T=hostab/host_ TEST_DEPS="build test kernel deploy"

test-fleet:
	@RELAY_FLEET_FULL=1 $(MAKE) --no-print-directory test \
		T=fleet/fleet_ TEST_DEPS="build test deploy fleet"
