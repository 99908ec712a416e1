// Which Python runs the workers and tools: the --python flag, else $KS_PYTHON, else the
// default of whatever starts it (python3).
#pragma once

#include <string>

namespace ks {

// Sets `*python` to the flag's value, or to $KS_PYTHON when the flag is empty and the variable
// is set; leaves it (the caller's default) otherwise.
void ChoosePython(const std::string& flag, std::string* python);

}  // namespace ks
