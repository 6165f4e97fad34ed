#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H

#include <uv.h>
// malloc_trim, which the Glibc module does not export.
#include <malloc.h>

#endif
