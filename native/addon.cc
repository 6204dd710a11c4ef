// The addon's export table. Everything else lives in *_wrap.cc (glue) and core/ (plain C++).
#include <napi.h>

#include "core/kernels.h"
#include "core/segment.h"
#include "engine_wrap.h"
#include "json_wrap.h"

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Engine", InitEngine(env));
  exports.Set("measureBandwidth", Napi::Function::New(env, MeasureBandwidth));
  exports.Set("vectorMember", Napi::Function::New(env, VectorMember));
  exports.Set("setIsa", Napi::Function::New(env, SetIsa));
  exports.Set("isa", Napi::String::New(env, nm::kernels().isa));
  exports.Set("dims", Napi::Number::New(env, (double)nm::kDims));
  return exports;
}

NODE_API_MODULE(newsmatch, Init)
