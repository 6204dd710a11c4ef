{
  "targets": [
    {
      "target_name": "newsmatch",
      "sources": [
        "native/addon.cc",
        "native/engine_wrap.cc",
        "native/json_wrap.cc",
        "native/core/json.cc",
        "native/core/kernels.cc",
        "native/core/segment.cc",
        "native/core/scan.cc",
        "native/core/pool.cc",
        "native/core/ivf.cc",
        "native/core/engine.cc",
        "native/core/monitors.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-Wno-unknown-pragmas", "-Wno-uninitialized", "-Wno-maybe-uninitialized"]
    }
  ]
}
