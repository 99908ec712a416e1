#include "cli/python_choice.h"

#include <cstdlib>

namespace ks {

void ChoosePython(const std::string& flag, std::string* python) {
  if (!flag.empty()) {
    *python = flag;
  } else if (const char* env = std::getenv("KS_PYTHON"); env != nullptr && *env != '\0') {
    *python = env;
  }
}

}  // namespace ks
