/* iosched kernel oracle: jiffies at HZ=250 (Debian's 6.12 config), driven by the oracle's
 * clock: jiffies = INITIAL_JIFFIES + now_ns / 4 ms. */
#ifndef SHIM_JIFFIES_H
#define SHIM_JIFFIES_H

#include "base.h"

#define HZ 250
#define MSEC_PER_SEC 1000L
#define NSEC_PER_SEC 1000000000L
#define INITIAL_JIFFIES ((unsigned long)(unsigned int)(-300 * HZ))
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)

extern unsigned long jiffies;

#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b) ((long)((a) - (b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)
#define time_is_before_jiffies(a) time_after(jiffies, a)
#define time_is_before_eq_jiffies(a) time_after_eq(jiffies, a)
#define time_is_after_jiffies(a) time_before(jiffies, a)

/* HZ divides 1000: a jiffy is 4 ms; milliseconds round up to whole jiffies. */
static inline unsigned int jiffies_to_msecs(const unsigned long j)
{
	return (MSEC_PER_SEC / HZ) * j;
}

static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	return (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ);
}

#endif
