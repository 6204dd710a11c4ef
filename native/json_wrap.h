// N-API glue for nm::vector_member (core/json.h).
#pragma once
#include <napi.h>

Napi::Value VectorMember(const Napi::CallbackInfo& info);
