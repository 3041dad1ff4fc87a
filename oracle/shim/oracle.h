/* iosched kernel oracle: what the block layer (blk.c) tells the driver (the driver). */
#ifndef SHIM_ORACLE_H
#define SHIM_ORACLE_H

#include "block.h"

struct elevator_type *shim_registered(void);
/* `bio` joined `rq` at its back ('B') or front ('F'). */
void shim_bio_merged(struct request *rq, struct bio *bio, char side);
/* `next` was merged into `rq` and is going away. */
void shim_requests_merged(struct request *rq, struct request *next);
/* `rq` is freed: its scheduler tag returns to the pool. */
void shim_request_freed(struct request *rq);

/* Jiffies timers (shim/kernel_lib.c): the earliest pending one, NULL when none, with its
 * expiry on the driver's clock; firing one runs its function. */
struct timer_list;
struct timer_list *shim_timer_next(uint64_t *at_ns);
void shim_timer_fire(struct timer_list *t, uint64_t now_ns);

#endif
