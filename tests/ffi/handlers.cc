// FFI handlers used by tests/test_ffi.py. They are written against the XLA FFI headers that
// jaxlib ships (jax.ffi.include_dir()) and compiled once per test session; the same shared
// library is registered with jaxlite and with real JAX, and the results compared.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <chrono>
#include <thread>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// --- RMS norm over the last axis (as the FFI tutorial's), and its two-output variant.

static float RmsNormRow(float eps, int64_t n, const float* x, float* y) {
  float sm = 0.0f;
  for (int64_t i = 0; i < n; ++i) sm += x[i] * x[i];
  float scale = 1.0f / std::sqrt(sm / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
  return scale;
}

static std::pair<int64_t, int64_t> Rows(ffi::AnyBuffer::Dimensions dims) {
  if (dims.size() == 0) return {0, 0};
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  int64_t last = dims.back();
  return {last == 0 ? 0 : total / last, last};
}

static ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {
  auto [rows, n] = Rows(x.dimensions());
  if (n == 0) return ffi::Error::InvalidArgument("RmsNorm input must be an array");
  for (int64_t r = 0; r < rows; ++r)
    RmsNormRow(eps, n, &x.typed_data()[r * n], &y->typed_data()[r * n]);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

static ffi::Error RmsNormFwdImpl(float eps, ffi::Buffer<ffi::F32> x,
                                 ffi::ResultBuffer<ffi::F32> y,
                                 ffi::ResultBuffer<ffi::F32> res) {
  auto [rows, n] = Rows(x.dimensions());
  if (n == 0) return ffi::Error::InvalidArgument("RmsNormFwd input must be an array");
  for (int64_t r = 0; r < rows; ++r)
    res->typed_data()[r] = RmsNormRow(eps, n, &x.typed_data()[r * n], &y->typed_data()[r * n]);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormFwd, RmsNormFwdImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// --- Attributes of every kind, written into a float64 output so the test can read them:
// out = [i64, i32, u8, f32, f64, flag, len(name), name[0], sum(arr), len(arr), sum(farr),
//        dict["a"] (i64), dict["b"] (f64), dict size]
static ffi::Error AttrsImpl(int64_t i64, int32_t i32, uint8_t u8, float f32, double f64,
                            bool flag, std::string_view name, ffi::Span<const int64_t> arr,
                            ffi::Span<const float> farr, ffi::Dictionary dict,
                            ffi::ResultBuffer<ffi::F64> out) {
  if (out->element_count() != 14)
    return ffi::Error::InvalidArgument("Attrs output must have 14 elements");
  double* o = out->typed_data();
  o[0] = static_cast<double>(i64);
  o[1] = i32;
  o[2] = u8;
  o[3] = f32;
  o[4] = f64;
  o[5] = flag ? 1.0 : 0.0;
  o[6] = static_cast<double>(name.size());
  o[7] = name.empty() ? -1.0 : static_cast<double>(name[0]);
  double s = 0.0;
  for (int64_t v : arr) s += static_cast<double>(v);
  o[8] = s;
  o[9] = static_cast<double>(arr.size());
  double fs = 0.0;
  for (float v : farr) fs += v;
  o[10] = fs;
  auto a = dict.get<int64_t>("a");
  if (a.has_error()) return a.error();
  auto b = dict.get<double>("b");
  if (b.has_error()) return b.error();
  o[11] = static_cast<double>(*a);
  o[12] = *b;
  o[13] = static_cast<double>(dict.size());
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Attrs, AttrsImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("i64")
                                  .Attr<int32_t>("i32")
                                  .Attr<uint8_t>("u8")
                                  .Attr<float>("f32")
                                  .Attr<double>("f64")
                                  .Attr<bool>("flag")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Span<const int64_t>>("arr")
                                  .Attr<ffi::Span<const float>>("farr")
                                  .Attr<ffi::Dictionary>("dict")
                                  .Ret<ffi::Buffer<ffi::F64>>());

// --- A handler that fails: the message says which value was bad.
static ffi::Error FailImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    if (x.typed_data()[i] < 0.0f)
      return ffi::Error::InvalidArgument("negative input at index " + std::to_string(i));
    y->typed_data()[i] = std::sqrt(x.typed_data()[i]);
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Fail, FailImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// --- Any dtype, any number of arguments: out = sum of the float arguments, element-wise,
// times the attribute `scale`.
template <typename T>
static void Accumulate(const ffi::AnyBuffer& b, double* out, size_t n) {
  const T* p = reinterpret_cast<const T*>(b.untyped_data());
  for (size_t i = 0; i < n; ++i) out[i] += static_cast<double>(p[i]);
}

static ffi::Error SumArgsImpl(double scale, ffi::RemainingArgs args,
                              ffi::ResultBuffer<ffi::F64> out) {
  size_t n = out->element_count();
  double* o = out->typed_data();
  for (size_t i = 0; i < n; ++i) o[i] = 0.0;
  for (size_t k = 0; k < args.size(); ++k) {
    auto b = args.get<ffi::AnyBuffer>(k);
    if (b.has_error()) return b.error();
    if (b->element_count() != n)
      return ffi::Error::InvalidArgument("argument " + std::to_string(k) +
                                         " has the wrong size");
    switch (b->element_type()) {
      case ffi::F32: Accumulate<float>(*b, o, n); break;
      case ffi::F64: Accumulate<double>(*b, o, n); break;
      case ffi::S32: Accumulate<int32_t>(*b, o, n); break;
      case ffi::S64: Accumulate<int64_t>(*b, o, n); break;
      default:
        return ffi::Error::InvalidArgument("unsupported dtype for argument " +
                                           std::to_string(k));
    }
  }
  for (size_t i = 0; i < n; ++i) o[i] *= scale;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(SumArgs, SumArgsImpl,
                              ffi::Ffi::Bind()
                                  .Attr<double>("scale")
                                  .RemainingArgs()
                                  .Ret<ffi::Buffer<ffi::F64>>());

// --- A side effect: counts its calls (read back with counter_value()).
static int64_t g_counter = 0;

static ffi::Error CountImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  ++g_counter;
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Count, CountImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

extern "C" int64_t counter_value() { return g_counter; }
extern "C" void counter_reset() { g_counter = 0; }

// --- The execution context: run id, device ordinal, thread pool.
// out = [run_id, device_ordinal, num_threads, task_ran]
static ffi::Error ContextProbeImpl(ffi::RunId run_id, int32_t device_ordinal,
                                   ffi::ThreadPool pool, ffi::ResultBuffer<ffi::S64> out) {
  if (out->element_count() != 4)
    return ffi::Error::InvalidArgument("ContextProbe output must have 4 elements");
  int64_t* o = out->typed_data();
  o[0] = run_id.run_id;
  o[1] = device_ordinal;
  o[2] = pool.num_threads();
  o[3] = 0;
  int64_t* flag = &o[3];
  pool.Schedule([flag] { *flag = 1; });
  // the scheduled task may run later on a real pool: wait for it (bounded)
  for (int i = 0; i < 100000000 && *reinterpret_cast<volatile int64_t*>(flag) == 0; ++i) {
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ContextProbe, ContextProbeImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::RunId>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Ctx<ffi::ThreadPool>()
                                  .Ret<ffi::Buffer<ffi::S64>>());

// --- Asks for a GPU stream, which a CPU runtime does not have: decoding fails cleanly.
static ffi::Error StreamProbeImpl(void* stream, ffi::ResultBuffer<ffi::F32> out) {
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(StreamProbe, StreamProbeImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// --- The C ABI as the headers lay it out, for the test to compare with jaxlite's ctypes.
#define XLA_OFF(T, f) static_cast<int64_t>(offsetof(T, f))
extern "C" int64_t layout_probe(int64_t* out) {
  int64_t v[] = {
      XLA_FFI_Api_STRUCT_SIZE, XLA_OFF(XLA_FFI_Api, api_version),
      XLA_OFF(XLA_FFI_Api, XLA_FFI_Error_Create), XLA_OFF(XLA_FFI_Api, XLA_FFI_Stream_Get),
      XLA_OFF(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get), XLA_FFI_CallFrame_STRUCT_SIZE,
      XLA_OFF(XLA_FFI_CallFrame, stage), XLA_OFF(XLA_FFI_CallFrame, args),
      XLA_OFF(XLA_FFI_CallFrame, rets), XLA_OFF(XLA_FFI_CallFrame, attrs),
      XLA_OFF(XLA_FFI_CallFrame, future), XLA_FFI_Buffer_STRUCT_SIZE,
      XLA_OFF(XLA_FFI_Buffer, dims), XLA_FFI_Args_STRUCT_SIZE, XLA_FFI_Rets_STRUCT_SIZE,
      XLA_FFI_Attrs_STRUCT_SIZE, static_cast<int64_t>(sizeof(XLA_FFI_Scalar)),
      static_cast<int64_t>(sizeof(XLA_FFI_Array)), static_cast<int64_t>(sizeof(XLA_FFI_ByteSpan)),
      XLA_FFI_Metadata_STRUCT_SIZE, static_cast<int64_t>(sizeof(XLA_FFI_Metadata)),
      XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Error_Create_Args_STRUCT_SIZE,
      XLA_FFI_Handler_Register_Args_STRUCT_SIZE, XLA_FFI_State_Set_Args_STRUCT_SIZE,
      XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  int64_t n = sizeof(v) / sizeof(v[0]);
  for (int64_t i = 0; i < n; ++i) out[i] = v[i];
  return n;
}

// --- A stateful handler: the instantiate stage creates a counter, execute reads and bumps it.
struct CounterState {
  static xla::ffi::TypeId id;
  int64_t value = 0;
};
xla::ffi::TypeId CounterState::id = {};

extern "C" XLA_FFI_TypeId* CounterStateTypeId() { return &CounterState::id; }
extern "C" const XLA_FFI_TypeInfo* CounterStateTypeInfo() {
  static const XLA_FFI_TypeInfo info = xla::ffi::MakeTypeInfo<CounterState>();
  return &info;
}

static ffi::ErrorOr<std::unique_ptr<CounterState>> CounterInstantiateImpl(int64_t start) {
  auto state = std::make_unique<CounterState>();
  state->value = start;
  return state;
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CounterInstantiate, CounterInstantiateImpl,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("start"));

static ffi::Error CounterExecuteImpl(CounterState* state, ffi::ResultBuffer<ffi::S64> out) {
  out->typed_data()[0] = state->value++;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CounterExecute, CounterExecuteImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<CounterState>>()
                                  .Ret<ffi::Buffer<ffi::S64>>());

// --- An asynchronous handler: returns a future completed from another thread.
static ffi::Future AsyncScaleImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  ffi::Promise promise;
  ffi::Future future(promise);
  const float* src = x.typed_data();
  float* dst = y->typed_data();
  size_t n = x.element_count();
  std::thread([promise = std::move(promise), src, dst, n]() mutable {
    for (size_t i = 0; i < n; ++i) dst[i] = 3.0f * src[i];
    promise.SetAvailable();
  }).detach();
  return std::move(future);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AsyncScale, AsyncScaleImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// --- An asynchronous handler that completes after `ms` milliseconds.
static ffi::Future AsyncSlowImpl(int64_t ms, ffi::ResultBuffer<ffi::F32> y) {
  ffi::Promise promise;
  ffi::Future future(promise);
  float* dst = y->typed_data();
  size_t n = y->element_count();
  std::thread([promise = std::move(promise), dst, n, ms]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    for (size_t i = 0; i < n; ++i) dst[i] = 7.0f;
    promise.SetAvailable();
  }).detach();
  return std::move(future);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AsyncSlow, AsyncSlowImpl,
                              ffi::Ffi::Bind().Attr<int64_t>("ms").Ret<ffi::Buffer<ffi::F32>>());
