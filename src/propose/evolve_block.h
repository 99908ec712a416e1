// The EVOLVE-BLOCK: the region of a candidate a proposer may change, delimited by the full-line
// comments `# EVOLVE-BLOCK-START` and `# EVOLVE-BLOCK-END` (any indentation). A candidate has
// exactly one such block.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ks {

// Where the block lies in a program. Offsets are bytes into the program text.
struct EvolveBlock {
  size_t start_marker_begin = 0;  // first byte of the START marker line
  size_t body_begin = 0;          // first byte after the START marker line's newline
  size_t body_end = 0;            // first byte of the END marker line
  size_t end_marker_end = 0;      // first byte after the END marker line's newline
  int start_line = 0;             // 1-based line numbers of the markers
  int end_line = 0;
  std::string marker_indent;  // leading whitespace of the START marker line
  std::string newline;        // "\r\n" when the START marker line ends so, else "\n"

  std::string_view Body(std::string_view code) const {
    return code.substr(body_begin, body_end - body_begin);
  }
};

enum class EvolveMarker { kNone, kStart, kEnd };

// Classifies one line (without its newline): kStart for a comment line such as
// `    # EVOLVE-BLOCK-START` (text may follow the marker after a space), kEnd likewise.
EvolveMarker ClassifyMarkerLine(std::string_view line);

// If `code` holds exactly one START marker followed by exactly one END marker (as comments, not
// inside strings), returns where the block lies. Otherwise InvalidArgument naming the marker
// line numbers, e.g. "found 2 `# EVOLVE-BLOCK-START` markers (lines 3, 20); exactly one
// EVOLVE-BLOCK is expected".
Result<EvolveBlock> FindEvolveBlock(std::string_view code);

// Returns `code` with the text between the markers replaced by `new_body`; everything outside,
// marker lines included, is byte-identical. When the common indentation of `new_body` is
// narrower than the old body's (a model that returned the block dedented), `new_body` is shifted
// right to the old body's indentation. New lines take the marker line's newline ("\n" or
// "\r\n"); a missing final newline is added. InvalidArgument if `code` has no single block or
// `new_body` holds a marker line.
Result<std::string> ReplaceEvolveBlock(std::string_view code, std::string_view new_body);

}  // namespace ks
