/* wire: encode and check the loadgen datagram header. */
#include "wire.h"

#include <endian.h>
#include <string.h>

#define WIRE_MAGIC 0x314e474cu	/* "LGN1" read as a little-endian u32 */

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

void wire_encode(const struct wire *w, void *buf)
{
	uint8_t *p = buf;
	put32(p, WIRE_MAGIC);
	put32(p + 4, w->run_id);
	put32(p + 8, w->thread);
	put32(p + 12, 0);
	put64(p + 16, w->seq);
	put64(p + 24, (uint64_t)w->intended_ns);
	put64(p + 32, (uint64_t)w->sent_ns);
}

bool wire_decode(const void *buf, size_t len, uint32_t run_id, struct wire *w)
{
	const uint8_t *p = buf;
	if (len < WIRE_HDR_LEN || get32(p) != WIRE_MAGIC ||
	    get32(p + 4) != run_id)
		return false;
	w->run_id = run_id;
	w->thread = get32(p + 8);
	w->seq = get64(p + 16);
	w->intended_ns = (int64_t)get64(p + 24);
	w->sent_ns = (int64_t)get64(p + 32);
	return true;
}
