#include "../base.h"
