// The whole C++ API of rangecomm's core.
#pragma once

#include "rangecomm/collectives.hpp"
#include "rangecomm/comm.hpp"
#include "rangecomm/group.hpp"
#include "rangecomm/p2p.hpp"
#include "rangecomm/request.hpp"
