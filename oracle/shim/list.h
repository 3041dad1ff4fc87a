/* iosched kernel oracle: doubly linked lists with the kernel's interface (list_add puts the
 * entry right after the head, list_add_tail right before it). */
#ifndef SHIM_LIST_H
#define SHIM_LIST_H

#include "base.h"

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *l)
{
	l->next = l;
	l->prev = l;
}

static inline void shim_list_link(struct list_head *e, struct list_head *prev,
				  struct list_head *next)
{
	next->prev = e;
	e->next = next;
	e->prev = prev;
	prev->next = e;
}

static inline void list_add(struct list_head *e, struct list_head *head)
{
	shim_list_link(e, head, head->next);
}

static inline void list_add_tail(struct list_head *e, struct list_head *head)
{
	shim_list_link(e, head->prev, head);
}

static inline void list_del_init(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	INIT_LIST_HEAD(e);
}

static inline void list_move(struct list_head *e, struct list_head *head)
{
	list_del_init(e);
	list_add(e, head);
}

static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	list_del_init(e);
	list_add_tail(e, head);
}

static inline int list_empty(const struct list_head *head)
{
	return head->next == head;
}

#define list_empty_careful(h) list_empty(h)
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(ptr, type, member) list_entry((ptr)->next, type, member)
#define list_first_entry_or_null(ptr, type, member) \
	(list_empty(ptr) ? NULL : list_first_entry(ptr, type, member))
#define list_for_each_entry_safe(pos, n, head, member)                            \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),            \
	    n = list_entry(pos->member.next, __typeof__(*pos), member);           \
	     &pos->member != (head);                                               \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif
