/*
 * libFuzzer target for relay's config parser (server/conf.c over inih):
 * any input must either parse or fail with a message; never crash, leak
 * or read out of bounds. Names are not resolved (ADDR_NUMERIC) so the
 * fuzzer never waits on DNS.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct conf c;
	char err[1024] = "";
	conf_defaults(&c);
	c.addr_flags = ADDR_NUMERIC;
	int rc = conf_load_string(&c, text, "fuzz.ini", err, sizeof(err));
	if (rc == 0)
		rc = conf_validate(&c, NULL, err, sizeof(err));
	/* A failure always explains itself. */
	if (rc != 0 && strncmp(err, "fuzz.ini", 8) != 0 && !strstr(err, "no ") &&
	    !strstr(err, "cpus:") && !strstr(err, "max_flows:"))
		abort();
	if (rc == 0 && (c.nlisten < 1 || c.nlisten > CONF_MAX_LISTEN ||
			c.tick_us < 50 || c.batch < 1 || c.batch > 256))
		abort();
	free(text);
	return 0;
}
