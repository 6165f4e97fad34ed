#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H

#include <uv.h>

#endif
