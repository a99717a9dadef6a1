#include "setup.hpp"

namespace hailo_decode_bindings {
void bind_setup(pybind11::module_&) {}
}  // namespace hailo_decode_bindings
