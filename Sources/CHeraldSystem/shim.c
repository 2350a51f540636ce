// The header holds only inline helpers; this file gives the target something to compile.
#include "CHeraldSystem.h"
