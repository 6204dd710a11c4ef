// The numbers of a request body's top-level "vector" member, read straight from its bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nm {

struct VectorMember {
  size_t start = 0, end = 0;  // the array's bytes, '[' to past ']'
  std::vector<double> values;
};

// True, with the member filled in, when `body` is a JSON object holding exactly one top-level
// member whose key is written `"vector"` and whose value is a non-empty array of JSON numbers,
// each finite as a double (correctly rounded, as JSON.parse reads it), and no top-level key
// written with an escape (one that might also read "vector"). False otherwise, whether the body
// is valid JSON or not: the caller then parses the whole body as before. The rest of the body
// is only walked, not checked: the caller parses it.
bool vector_member(const uint8_t* body, size_t n, VectorMember* out);

}  // namespace nm
