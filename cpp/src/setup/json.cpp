// (being written)
#include "hailo_decode/setup.hpp"
