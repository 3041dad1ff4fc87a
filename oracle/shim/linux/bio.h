#include "../block.h"
