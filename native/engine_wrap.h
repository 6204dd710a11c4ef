// N-API glue for nm::Engine: argument checks, typed-array conversion, AsyncWorkers.
#pragma once
#include <napi.h>

Napi::Function InitEngine(Napi::Env env);
Napi::Value MeasureBandwidth(const Napi::CallbackInfo& info);
Napi::Value SetIsa(const Napi::CallbackInfo& info);
