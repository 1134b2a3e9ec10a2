// `CommandLine.arguments` for swctl, given by glibc instead of searched for.
//
// The Swift runtime on Linux finds argv with a static constructor (CommandLine.cpp) that
// reads /proc/self/maps and parses every line with sscanf, in every process, before main:
// five system calls and 50,000 instructions of a `swctl status` that costs 250,000 in all
// (docs/PERFORMANCE.md, "Where swctl's start-up goes"). The stdlib reaches that file only
// through `_swift_stdlib_getUnsafeArgvArgc`; defined here, in an object the static link
// reads before libswiftCore.a, it is the definition used, the archive member is never
// pulled in, and its constructor never runs. glibc hands argc and argv to every
// .init_array entry, static or dynamic, before any Swift code runs.
//
// Hidden: where the runtime is a shared library (debug builds, tests) its own definition is
// internal to it and this one is simply unused.

static int savedCount;
static char **savedArguments;

static void saveArguments(int count, char **arguments, char **environment) {
    (void)environment;
    savedCount = count;
    savedArguments = arguments;
}

__attribute__((section(".init_array"), used))
static void (*const saveArgumentsEntry)(int, char **, char **) = saveArguments;

// The runtime's declaration: `SWIFT_CC(swift) char **_swift_stdlib_getUnsafeArgvArgc(int *)`.
__attribute__((swiftcall, visibility("hidden")))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    *outArgLen = savedCount;
    return savedArguments;
}
