#include "../../block.h"
