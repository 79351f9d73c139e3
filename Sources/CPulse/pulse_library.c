/* libpulse, opened at the first call of one of its functions (trampolines.c): see CPulse.h. */
#include "pulse_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *library(void) {
    static void *handle;
    void *opened = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
    if (opened) return opened;
    opened = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!opened) {
        fprintf(stderr, "audio-policyd: cannot load libpulse: %s\n", dlerror());
        abort();
    }
    __atomic_store_n(&handle, opened, __ATOMIC_RELEASE);
    return opened;
}

void *apd_pulse_symbol(void **slot, const char *name) {
    void *symbol = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (symbol) return symbol;
    symbol = dlsym(library(), name);
    if (!symbol) {
        fprintf(stderr, "audio-policyd: libpulse has no %s: %s\n", name, dlerror());
        abort();
    }
    __atomic_store_n(slot, symbol, __ATOMIC_RELEASE);
    return symbol;
}
