// Exporting the MPIX_ calls of rangecomm.h (the library is built with -fvisibility=hidden).
#pragma once

#define RC_MPIX_EXPORT extern "C" __attribute__((visibility("default")))
// PMPIX_X as another name of the definition of MPIX_X.
#define RC_PMPIX_ALIAS(name) __attribute__((alias(#name), visibility("default")))
