#include "json.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace nm {

namespace {

bool space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_space(const uint8_t* b, size_t n, size_t i) {
  while (i < n && space(b[i])) i++;
  return i;
}

// Past the string whose opening quote is at b[i]; n when unterminated. `escaped` says whether a
// backslash appeared in it.
size_t skip_string(const uint8_t* b, size_t n, size_t i, bool* escaped) {
  for (i++; i < n; i++) {
    if (b[i] == '"') return i + 1;
    if (b[i] == '\\') *escaped = true, i++;
  }
  return n;
}

// Past the value starting at b[i] (a string, an object or array with whatever they hold, or a
// literal or number up to its delimiter); n when it runs off the end. Not validated: the
// caller's JSON.parse of the rest does that.
size_t skip_value(const uint8_t* b, size_t n, size_t i) {
  if (i >= n) return n;
  bool ignored = false;
  if (b[i] == '"') return skip_string(b, n, i, &ignored);
  if (b[i] == '{' || b[i] == '[') {
    size_t depth = 0;
    for (; i < n; i++) {
      uint8_t c = b[i];
      if (c == '"') {
        i = skip_string(b, n, i, &ignored) - 1;
      } else if (c == '{' || c == '[') {
        depth++;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return n;
  }
  while (i < n && b[i] != ',' && b[i] != '}' && b[i] != ']' && !space(b[i])) i++;
  return i;
}

// Past the JSON number at b[i] (RFC 8259: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?), or i when
// there is none.
size_t number_end(const uint8_t* b, size_t n, size_t i) {
  const uint8_t *p = b + i, *end = b + n;
  auto digits = [&]() {
    const uint8_t* s = p;
    while (p < end && (unsigned)(*p - '0') < 10) p++;
    return p > s;
  };
  if (p < end && *p == '-') p++;
  if (p < end && *p == '0') p++;
  else if (!digits()) return i;
  if (p < end && *p == '.') {
    p++;
    if (!digits()) return i;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!digits()) return i;
  }
  return (size_t)(p - b);
}

// The array of numbers at b[i] (its '['); false for anything else in it.
bool number_array(const uint8_t* b, size_t n, size_t i, VectorMember* out) {
  out->start = i;
  out->values.clear();
  out->values.reserve((n - i) / 8);
  i = skip_space(b, n, i + 1);
  for (;;) {
    size_t e = number_end(b, n, i);
    if (e == i) return false;
    double d;
    // from_chars takes the number as JSON wrote it (no '+', hex or inf: checked above), and
    // rounds it correctly, as JSON.parse does; out of range (1e400, 1e-400) is left to JSON.parse.
    auto r = std::from_chars(reinterpret_cast<const char*>(b + i), reinterpret_cast<const char*>(b + e), d);
    if (r.ec != std::errc() || r.ptr != reinterpret_cast<const char*>(b + e) || !std::isfinite(d)) return false;
    out->values.push_back(d);
    i = skip_space(b, n, e);
    if (i < n && b[i] == ',') {
      i = skip_space(b, n, i + 1);
    } else if (i < n && b[i] == ']') {
      out->end = i + 1;
      return true;
    } else {
      return false;
    }
  }
}

}  // namespace

bool vector_member(const uint8_t* b, size_t n, VectorMember* out) {
  size_t i = skip_space(b, n, 0);
  if (i >= n || b[i] != '{') return false;
  i = skip_space(b, n, i + 1);
  if (i < n && b[i] == '}') return false;
  bool found = false;
  for (;;) {
    if (i >= n || b[i] != '"') return false;
    bool escaped = false;
    size_t key_end = skip_string(b, n, i, &escaped);
    if (key_end >= n || escaped) return false;
    bool is_vector = key_end - i == 8 && std::memcmp(b + i, "\"vector\"", 8) == 0;
    i = skip_space(b, n, key_end);
    if (i >= n || b[i] != ':') return false;
    i = skip_space(b, n, i + 1);
    if (is_vector) {
      // A second "vector" member: JSON.parse keeps the last; left to it.
      if (found || i >= n || b[i] != '[' || !number_array(b, n, i, out)) return false;
      found = true;
      i = out->end;
    } else {
      i = skip_value(b, n, i);
    }
    i = skip_space(b, n, i);
    if (i < n && b[i] == ',') {
      i = skip_space(b, n, i + 1);
    } else if (i < n && b[i] == '}') {
      return found && !out->values.empty() && skip_space(b, n, i + 1) == n;
    } else {
      return false;
    }
  }
}

}  // namespace nm
