/*
 * peer: the unix_allow list, parsed once (names looked up then) and
 * matched per datagram by a walk of at most PEER_MAX ids.
 */
#include "peer.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "why.h"

/* Every id a user namespace does not map reads as this one. */
#define PEER_OVERFLOW_ID	65534

int peer_id(bool group, const char *text, uint32_t *id, char *why,
	    size_t whylen)
{
	const char *what = group ? "group" : "user";
	if (!*text)
		return why_set(why, whylen, "an empty %s id", what);
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (*text >= '0' && *text <= '9') {
		/* (uid_t)-1 is no one: chown(2) and setuid(2) take it for
		 * "unchanged" */
		if (*end || errno || v >= UINT32_MAX)
			return why_set(why, whylen, "'%s' is not a %s id", text,
				       what);
		*id = (uint32_t)v;
		return 0;
	}
	char buf[16384];	/* a group's members come with it */
	int e;
	if (group) {
		struct group g, *gp = NULL;
		e = getgrnam_r(text, &g, buf, sizeof(buf), &gp);
		if (gp)
			*id = gp->gr_gid;
		if (gp || e)
			goto done;
	} else {
		struct passwd pw, *pp = NULL;
		e = getpwnam_r(text, &pw, buf, sizeof(buf), &pp);
		if (pp)
			*id = pp->pw_uid;
		if (pp || e)
			goto done;
	}
	return why_set(why, whylen, "no %s '%s' on this host", what, text);
done:
	if (e)
		return why_set(why, whylen, "cannot look up %s '%s': %s", what,
			       text, strerror(e));
	return 0;
}

int peer_parse(struct peer_list *l, const char *text, char *why,
	       size_t whylen)
{
	memset(l, 0, sizeof(*l));
	const char *p = text;
	for (;;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, ",");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		char item[256];
		if (n >= sizeof(item))
			return why_set(why, whylen, "'%.40s...' is too long", p);
		memcpy(item, p, n);
		item[n] = 0;
		bool group = strncmp(item, "gid:", 4) == 0;
		if (!group && strncmp(item, "uid:", 4) != 0)
			return why_set(why, whylen, "'%s': expected uid:ID or "
				       "gid:ID (a number or a name), separated "
				       "by commas", item);
		if (l->n == PEER_MAX)
			return why_set(why, whylen, "more than %d ids", PEER_MAX);
		struct peer_id *e = &l->e[l->n];
		if (peer_id(group, item + 4, &e->id, why, whylen) < 0)
			return -1;
		if (e->id == PEER_OVERFLOW_ID)
			return why_set(why, whylen, "'%s': %d is the id every "
				       "user and group a user namespace does "
				       "not map reads as (PrivateUsers=): "
				       "allowing it would allow them all",
				       item, PEER_OVERFLOW_ID);
		e->group = group;
		l->n++;
		p += strcspn(p, ",");
		if (!*p)
			return 0;
		p++;
	}
}

bool peer_allowed(const struct peer_list *l, uid_t uid, gid_t gid)
{
	for (int i = 0; i < l->n; i++)
		if (l->e[i].id == (l->e[i].group ? (uint32_t)gid : (uint32_t)uid))
			return true;
	return l->n == 0;
}
