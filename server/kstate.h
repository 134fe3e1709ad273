/*
 * kstate: what the running kernel carries, read once at start from its own
 * type information (BTF, /sys/kernel/btf/vmlinux) with libbpf: PREEMPT_RT,
 * the type of struct eventpoll's lock, the CFS throttle model, and the
 * verdict on the epoll fix. What to look for and how to judge it are the
 * rows of deploy/kernel-markers, built into relay, which relay-preflight
 * reads too: the two name a kernel alike. A fact the BTF does not tell is
 * "unknown", and so is every verdict that needs it: never "fixed".
 */
#ifndef RELAY_KSTATE_H
#define RELAY_KSTATE_H

#include <stddef.h>

#define KSTATE_MAX		8	/* facts and verdicts */
#define KSTATE_NAME_MAX		32
#define KSTATE_VALUE_MAX	64
#define KSTATE_UNKNOWN		"unknown"

struct kstate {
	int n;			/* facts first, then verdicts, in file order */
	struct {
		char name[KSTATE_NAME_MAX];
		char value[KSTATE_VALUE_MAX];
	} item[KSTATE_MAX];
	char why[512];		/* why the BTF told nothing; "" when read */
};

/* deploy/kernel-markers as it was built in. */
extern const char kstate_markers[];

/* Fill k by the rows of markers (kernel-markers' text) from the BTF at
 * btf (raw, as /sys/kernel/btf/vmlinux, or an ELF's .BTF); where it does
 * not tell PREEMPT_RT, realtime says it ("1": yes; NULL: not read).
 * Returns 0 (a BTF that cannot be read leaves its facts "unknown", and
 * k->why says why), or -1 when markers is malformed, err naming its line. */
int kstate_read(struct kstate *k, const char *markers, const char *btf,
		const char *realtime, char *err, size_t errlen);

/* The value of the fact or verdict name; "unknown" when k has none. */
const char *kstate_get(const struct kstate *k, const char *name);

#endif
