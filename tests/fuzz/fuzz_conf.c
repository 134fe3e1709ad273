/*
 * libFuzzer target for relay's config parser (server/conf.c over inih):
 * any input must either parse or fail with a message; never crash, leak
 * or read out of bounds. Names are not resolved (ADDR_NUMERIC) so the
 * fuzzer never waits on DNS.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A message: one line, not empty. (It may quote the rejected text, bytes
 * and all.) */
static bool readable(const char *err)
{
	return err[0] && !strchr(err, '\n');
}

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
	/* A parse error says where (file:line); a failed validation is about
	 * the settings as a whole ("no upstream", "max_conns: ..."), and any
	 * of them is an answer, not a crash. Either way it explains itself. */
	if (conf_load_string(&c, text, "fuzz.ini", err, sizeof(err)) != 0) {
		if (strncmp(err, "fuzz.ini:", 9) != 0 || !readable(err))
			abort();
	} else if (conf_validate(&c, NULL, err, sizeof(err)) != 0) {
		if (!readable(err))
			abort();
	} else if (c.nlisten < 1 || c.nlisten > CONF_MAX_LISTEN ||
		   c.tick_us < 50 || c.batch < 1 || c.batch > 256) {
		abort();
	}
	free(text);
	return 0;
}
