// swctl's command line for the Swift runtime, without the runtime's own search for it
// (SwctlArguments.c). Nothing to call: linking the target is what it does.
#ifndef SWCTL_ARGUMENTS_H
#define SWCTL_ARGUMENTS_H
#endif
