#include "setup.hpp"

namespace hailo_decode_bindings {
void bind_pairing(pybind11::module_&) {}
}  // namespace hailo_decode_bindings
