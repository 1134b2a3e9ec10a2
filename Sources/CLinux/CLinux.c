// Headers only (include/CLinux.h); SwiftPM wants a source file in every C target.
#include "CLinux.h"
