/*
 * list: doubly linked lists threaded through their members, each of which
 * embeds a struct list_link per list it can be on (container_of finds the
 * member). The flow table and the stream connections move members on every
 * burst, so joining, leaving and moving take no allocation and no walk.
 */
#ifndef RELAY_LIST_H
#define RELAY_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_link {
	struct list_link *prev, *next;	/* NULL at the ends, and off the list */
};

struct list {
	struct list_link *head, *tail;
};

/* Whether n, on l or on no list, is on l. */
static inline bool list_has(const struct list *l, const struct list_link *n)
{
	return n->prev || l->head == n;
}

/* Take n off l; nothing when it is not on it. */
static inline void list_remove(struct list *l, struct list_link *n)
{
	if (!list_has(l, n))
		return;
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

/* Put n, on no list, into l right after `after` (first when NULL). */
static inline void list_insert_after(struct list *l, struct list_link *after,
				     struct list_link *n)
{
	n->prev = after;
	n->next = after ? after->next : l->head;
	if (n->next)
		n->next->prev = n;
	else
		l->tail = n;
	if (after)
		after->next = n;
	else
		l->head = n;
}

/* n, on no list, becomes l's last. */
static inline void list_append(struct list *l, struct list_link *n)
{
	list_insert_after(l, l->tail, n);
}

/* n, on l or on no list, becomes l's last. */
static inline void list_move_tail(struct list *l, struct list_link *n)
{
	if (l->tail == n)
		return;
	list_remove(l, n);
	list_append(l, n);
}

#endif
