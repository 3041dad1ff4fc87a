/* iosched kernel oracle: the block layer around kyber (block/kyber-iosched.c): the software
 * queue (one CPU, one blk_mq_ctx), queue runs, statistics switches, the sysfs parser and
 * kyber's tracepoints, printed as decision lines (crates/lab/src/oracle/mod.rs). */
#include "block.h"
#include "oracle.h"
#include <trace/events/kyber.h>

struct blk_mq_ctx *blk_mq_get_ctx(struct request_queue *q)
{
	(void)q;
	return &shim_mq_ctx;
}

struct blk_mq_hw_ctx *blk_mq_map_queue(struct request_queue *q, blk_opf_t opf,
				       struct blk_mq_ctx *ctx)
{
	(void)q;
	(void)opf;
	return ctx->hctxs[HCTX_TYPE_DEFAULT];
}

/* A token waiter woke: the driver runs the hardware queue after every event, which covers
 * the run this asks for. */
void blk_mq_run_hw_queue(struct blk_mq_hw_ctx *hctx, bool async)
{
	(void)hctx;
	(void)async;
}

/* Kernel: kstrtoull(): an optional '+', decimal digits, an optional newline. */
int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	if (*s == '+')
		s++;
	unsigned long long v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');
		if (v > (ULLONG_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (p == s)
		return -EINVAL;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*res = v;
	return 0;
}

void trace_kyber_latency(dev_t dev, const char *domain, const char *type, unsigned int percentile,
			 unsigned int numerator, unsigned int denominator, unsigned int samples)
{
	(void)dev;
	printf("K %llu latency %s %s p%u %u/%u samples=%u\n", (unsigned long long)shim_now_ns(),
	       domain, type, percentile, numerator, denominator, samples);
}

void trace_kyber_adjust(dev_t dev, const char *domain, unsigned int depth)
{
	(void)dev;
	printf("K %llu adjust %s %u\n", (unsigned long long)shim_now_ns(), domain, depth);
}

void trace_kyber_throttled(dev_t dev, const char *domain)
{
	(void)dev;
	printf("K %llu throttled %s\n", (unsigned long long)shim_now_ns(), domain);
}
