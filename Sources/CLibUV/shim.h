#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H

#include <uv.h>
// malloc_trim, which the Glibc module does not export.
#include <malloc.h>

// uv_loop_configure is variadic, which Swift cannot call.
static inline int homerpc_uv_measure_idle_time(uv_loop_t *loop) {
    return uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
}

#endif
