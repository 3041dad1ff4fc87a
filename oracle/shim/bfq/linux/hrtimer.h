#include "../bfq_shim.h"
