# server/: relay, the real-time UDP, TCP and TLS relay.
$(eval $(call program,relay,server))

# The unit tests of relay's modules include their headers.
$(O)/tests/test_flow $(O)/tests/test_conf $(O)/tests/test_conf_man \
	$(O)/tests/test_sockfile $(O)/tests/test_kstate $(O)/tests/test_watch: CPPFLAGS += -Iserver

# deploy/kernel-markers, which relay-preflight reads at run time, built
# into relay as a C string (kstate.h): one definition for both.
$(O)/gen/kernel_markers.h: deploy/kernel-markers
	@mkdir -p $(@D)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@
$(O)/server/kstate.o: $(O)/gen/kernel_markers.h
$(O)/server/kstate.o: CPPFLAGS += -I$(O)/gen
