/* iosched kernel oracle: kyber's tracepoints, printed as decision lines (shim/kyber.c). */
#include "../../block.h"
void trace_kyber_latency(dev_t dev, const char *domain, const char *type, unsigned int percentile,
			 unsigned int numerator, unsigned int denominator, unsigned int samples);
void trace_kyber_adjust(dev_t dev, const char *domain, unsigned int depth);
void trace_kyber_throttled(dev_t dev, const char *domain);
