#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>

#endif
