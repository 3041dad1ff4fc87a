#include "block.h"
