#include "json_wrap.h"

#include <cstring>

#include "core/json.h"

// vectorMember(body: Uint8Array) → { start, end, values: Float64Array } | null
Napi::Value VectorMember(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(env, "vectorMember(body) needs a Uint8Array");
  auto body = info[0].As<Napi::Uint8Array>();
  nm::VectorMember m;
  if (!nm::vector_member(body.Data(), body.ElementLength(), &m)) return env.Null();
  auto values = Napi::Float64Array::New(env, m.values.size());
  std::memcpy(values.Data(), m.values.data(), m.values.size() * sizeof(double));
  auto o = Napi::Object::New(env);
  o.Set("start", (double)m.start);
  o.Set("end", (double)m.end);
  o.Set("values", values);
  return o;
}
