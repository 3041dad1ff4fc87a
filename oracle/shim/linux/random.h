#include "../kernel_lib.h"
