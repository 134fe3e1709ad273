# server/: relay, the real-time UDP, TCP and TLS relay.
$(eval $(call program,relay,server))

# The unit tests of relay's modules include their headers.
$(O)/tests/test_flow $(O)/tests/test_conf $(O)/tests/test_conf_man \
	$(O)/tests/test_sockfile: CPPFLAGS += -Iserver
