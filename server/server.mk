# server/: relay, the real-time UDP, TCP and TLS relay.
$(eval $(call program,relay,server))

# The unit tests of relay's modules include their headers.
$(O)/tests/test_flow $(O)/tests/test_conf: CPPFLAGS += -Iserver
