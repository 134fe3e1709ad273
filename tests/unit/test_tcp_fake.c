/* Unit tests for server/tcp's byte path over the fake transport and the
 * emulated edge-triggered epoll of its fuzz target (tests/fuzz/fuzz_tcp.c,
 * whose oracle aborts on any broken promise), one input for each bug it
 * found, so that each stays fixed in every build the unit tests run in:
 *  - a reset after the peer's FIN, with nothing to write to that peer,
 *    was never passed on;
 *  - a TLS write waiting for input whose record a read of the same
 *    socket took (and with it the event) waited for ever. */
#include "check.h"
#include "../fuzz/fuzz_tcp.c"

static void replay(const char *what, const uint8_t *in, size_t len)
{
	/* On a failure the oracle aborts: say which input it was. */
	fprintf(stderr, "replaying: %s\n", what);
	CHECK(LLVMFuzzerTestOneInput(in, len) == 0);
}

int main(void)
{
	/* client: 1 byte, FIN; the loop runs; client: reset */
	static const uint8_t fin_then_reset[] = {
		0xff, 0x41, 0xff, 0x00, 0x09, 0x04, 0x0a, 0x86, 0x0a, 0x0e,
	};
	/* upstream: the next write must read first, the next read must
	 * write first (windows shut); the client sends; the upstream opens
	 * its window, sends 18 bytes; a read of the upstream takes the
	 * record the write waited for */
	static const uint8_t tls_read_takes_write_record[] = {
		0x0f, 0x40, 0x00, 0x20, 0x00, 0xf9, 0x00, 0x00, 0x29, 0x00,
		0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x03,
		0x06, 0x0a, 0x03, 0x06, 0x0a, 0x03, 0x63, 0x01, 0x11, 0x0a,
	};
	replay("fin-then-reset", fin_then_reset, sizeof(fin_then_reset));
	replay("tls-read-takes-write-record", tls_read_takes_write_record,
	       sizeof(tls_read_takes_write_record));
	return check_done();
}
