/*
 * peer: who may send to relay's unix:// listeners (unix_allow), by the
 * credentials the kernel gives each datagram (SO_PASSCRED, then
 * SCM_CREDENTIALS on receipt). A datagram socket has no connect that
 * SO_PEERCRED could vouch for: each datagram carries its own sender's
 * ids, which the sender may not forge (it may name its real, effective
 * or saved ids, no others, without CAP_SETUID and CAP_SETGID).
 */
#ifndef RELAY_PEER_H
#define RELAY_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PEER_MAX	16

/* Users and groups allowed; none: everyone. */
struct peer_list {
	int n;
	struct peer_id {
		bool group;	/* a gid, else a uid */
		uint32_t id;
	} e[PEER_MAX];
};

/* The id of a user (group false) or a group named by text, a number or a
 * name (looked up now). 0, or -1 with why. */
int peer_id(bool group, const char *text, uint32_t *id, char *why,
	    size_t whylen);

/* Parse "uid:ID, gid:ID, ..." (each ID a number or a name) into l, which
 * is cleared first. 65534 is refused: under a user namespace every user
 * and group the process cannot see is 65534 to it. 0, or -1 with why. */
int peer_parse(struct peer_list *l, const char *text, char *why,
	       size_t whylen);

/* Whether a sender of uid and gid may send: l is empty, or names its uid
 * or its gid. */
bool peer_allowed(const struct peer_list *l, uid_t uid, gid_t gid);

#endif
