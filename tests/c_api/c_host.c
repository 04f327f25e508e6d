/* \file A host written in C, as a non-Python framework would be: it compiles a Program JSON
 * through the C API, calls the function on fresh random data and checks it against values it
 * computes itself, then checks that bad input comes back as errors, not aborts. Exit 0: pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cinn_like/c_api.h"

static int failures = 0;
#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n");                            \
      ++failures;                                       \
    }                                                   \
  } while (0)

/* y = relu(x * w + b): x [n, 16], w [16], b [16] broadcast over rows; n symbolic. */
static const char* kProgram =
    "{\"format\": \"cinn_like.program\", \"version\": 1,"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"n\", 16]},"
    "              {\"name\": \"w\", \"dtype\": \"float32\", \"shape\": [16]},"
    "              {\"name\": \"b\", \"dtype\": \"float32\", \"shape\": [16]}],"
    " \"instructions\": ["
    "  {\"op\": \"mul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"t\"], \"attrs\": {}},"
    "  {\"op\": \"add\", \"inputs\": [\"t\", \"b\"], \"outputs\": [\"u\"], \"attrs\": {}},"
    "  {\"op\": \"relu\", \"inputs\": [\"u\"], \"outputs\": [\"y\"], \"attrs\": {}}],"
    " \"outputs\": [\"y\"]}";

static DLTensor Tensor(float* data, int ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static float Uniform(void) { return (float)rand() / (float)RAND_MAX * 4.0f - 2.0f; }

int main(void) {
  srand((unsigned)time(NULL));
  /* A warm-up returns at once: nothing to load for x86, no device in use here for cuda; a
   * target that does not parse is an error. */
  CHECK(cinn_like_warm_up("x86") == 0, "warm up x86: %s", cinn_like_get_last_error());
  CHECK(cinn_like_warm_up("cuda -arch=sm_90") == 0, "warm up cuda: %s", cinn_like_get_last_error());
  CHECK(cinn_like_warm_up("tpu") != 0 && strstr(cinn_like_get_last_error(), "tpu") != NULL,
        "warm up of an unknown target: %s", cinn_like_get_last_error());
  CHECK(cinn_like_warm_up(NULL) != 0, "warm up of null");
  cinn_like_module m = NULL;
  int rc = cinn_like_compile(kProgram, "x86", "bias_relu", &m);
  CHECK(rc == 0, "compile: %s", cinn_like_get_last_error());
  if (rc != 0) return 1;
  cinn_like_function f = NULL;
  CHECK(cinn_like_module_lookup(m, "bias_relu", &f) == 0, "lookup: %s", cinn_like_get_last_error());
  const char* signature = NULL;
  CHECK(cinn_like_module_signature(m, &signature) == 0 && strstr(signature, "\"n\"") != NULL,
        "signature names the symbolic dim: %s", signature ? signature : "(null)");

  int64_t n = 37, x_shape[2] = {n, 16}, v_shape[1] = {16}, y_shape[2] = {n, 16};
  float* x = malloc(sizeof(float) * n * 16);
  float* y = malloc(sizeof(float) * n * 16);
  float w[16], b[16];
  for (int64_t i = 0; i < n * 16; ++i) x[i] = Uniform(), y[i] = NAN;
  for (int j = 0; j < 16; ++j) w[j] = Uniform(), b[j] = Uniform();
  DLTensor tx = Tensor(x, 2, x_shape), tw = Tensor(w, 1, v_shape), tb = Tensor(b, 1, v_shape),
           ty = Tensor(y, 2, y_shape);
  DLTensor* args[4] = {&tx, &tw, &tb, &ty};
  rc = cinn_like_call(f, args, 4, NULL);
  CHECK(rc == 0, "call: %s", cinn_like_get_last_error());
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 16; ++j) {
      float expect = x[i * 16 + j] * w[j] + b[j];
      expect = expect > 0 ? expect : 0;
      if (!(fabsf(y[i * 16 + j] - expect) <= 1e-6f * (1 + fabsf(expect)))) ++wrong;
    }
  }
  CHECK(wrong == 0, "%d of %lld outputs differ from relu(x * w + b)", wrong, (long long)(n * 16));

  /* Bad calls: each an error with a message; the module stays usable. */
  CHECK(cinn_like_call(f, args, 3, NULL) != 0 && strstr(cinn_like_get_last_error(), "expected 4") != NULL,
        "wrong argument count: %s", cinn_like_get_last_error());
  int64_t bad_shape[1] = {17};
  DLTensor tw_bad = Tensor(w, 1, bad_shape);
  args[1] = &tw_bad;
  CHECK(cinn_like_call(f, args, 4, NULL) != 0, "a [17] weight must be rejected");
  args[1] = &tw;
  CHECK(cinn_like_call(f, args, 4, NULL) == 0, "the module works after errors: %s", cinn_like_get_last_error());

  /* Malformed arguments, one at a time from the good call: each an error naming the function,
   * the argument and what was expected (none may crash the host). */
  CHECK(cinn_like_call(f, NULL, 4, NULL) != 0 &&
            strstr(cinn_like_get_last_error(), "bias_relu: expected 4 tensor arguments") != NULL &&
            strstr(cinn_like_get_last_error(), "null argument array") != NULL,
        "null args: %s", cinn_like_get_last_error());
  args[1] = NULL;
  CHECK(cinn_like_call(f, args, 4, NULL) != 0 &&
            strstr(cinn_like_get_last_error(), "argument 1 (w) is a null DLTensor") != NULL,
        "null tensor: %s", cinn_like_get_last_error());
  args[1] = &tw;
  int64_t negative_shape[2] = {-3, 16}, strides[2] = {16, 2};
  struct {
    const char* expect; /* in the message, after "bias_relu: argument 0 (x) " */
    int spoil;
  } bad_x[] = {{"has a null shape, expected 2 sizes", 0},
               {"has null data", 1},
               {"has size -3 at dim 0, expected a size >= 0", 2},
               {"has dtype float64, expected float32", 3},
               {"has dtype int32, expected float32", 4},
               {"has dtype float32x2, expected float32", 5},
               {"is on cuda, expected cpu", 6},
               {"has rank 1 (shape [37]), expected rank 2", 7},
               {"is not contiguous (stride 2 at dim 1, expected 1)", 8}};
  for (size_t k = 0; k < sizeof(bad_x) / sizeof(bad_x[0]); ++k) {
    DLTensor spoilt = tx;
    switch (bad_x[k].spoil) {
      case 0: spoilt.shape = NULL; break;
      case 1: spoilt.data = NULL; break;
      case 2: spoilt.shape = negative_shape; break;
      case 3: spoilt.dtype.bits = 64; break;
      case 4: spoilt.dtype.code = kDLInt; break;
      case 5: spoilt.dtype.lanes = 2; break;
      case 6: spoilt.device.device_type = kDLCUDA; break;
      case 7: spoilt.ndim = 1; break;
      case 8: spoilt.strides = strides; break;
    }
    args[0] = &spoilt;
    int code = cinn_like_call(f, args, 4, NULL);
    const char* message = cinn_like_get_last_error();
    CHECK(code != 0 && strstr(message, "bias_relu: argument 0 (x) ") != NULL &&
              strstr(message, bad_x[k].expect) != NULL,
          "case %d: expected \"%s\", got \"%s\"", bad_x[k].spoil, bad_x[k].expect, message);
  }
  args[0] = &tx;
  /* No element, no data: a no-op call. */
  int64_t empty_shape[2] = {0, 16};
  DLTensor tx_empty = Tensor(NULL, 2, empty_shape), ty_empty = Tensor(NULL, 2, empty_shape);
  DLTensor* empty_args[4] = {&tx_empty, &tw, &tb, &ty_empty};
  CHECK(cinn_like_call(f, empty_args, 4, NULL) == 0, "zero rows: %s", cinn_like_get_last_error());
  CHECK(cinn_like_call(f, args, 4, NULL) == 0, "the module works after errors: %s", cinn_like_get_last_error());

  /* A prepared call: the plan keeps the examples' descriptions, a run takes only data. */
  {
    float* x2 = malloc(sizeof(float) * n * 16);
    float* y2 = malloc(sizeof(float) * n * 16);
    for (int64_t i = 0; i < n * 16; ++i) x2[i] = Uniform(), y2[i] = NAN;
    cinn_like_call_plan plan = NULL;
    CHECK(cinn_like_call_plan_create(f, args, 4, &plan) == 0, "plan: %s", cinn_like_get_last_error());
    void* data[4] = {x2, w, b, y2};
    CHECK(cinn_like_call_plan_run(plan, data, NULL) == 0, "plan run: %s", cinn_like_get_last_error());
    int wrong_plan = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int j = 0; j < 16; ++j) {
        float expect = x2[i * 16 + j] * w[j] + b[j];
        expect = expect > 0 ? expect : 0;
        if (!(fabsf(y2[i * 16 + j] - expect) <= 1e-6f * (1 + fabsf(expect)))) ++wrong_plan;
      }
    }
    CHECK(wrong_plan == 0, "plan run: %d outputs differ from relu(x * w + b)", wrong_plan);
    /* A plan made from a wrong example fails each run with the function's own message. */
    DLTensor* bad_args[4] = {&tx, &tw_bad, &tb, &ty};
    cinn_like_call_plan bad_plan = NULL;
    CHECK(cinn_like_call_plan_create(f, bad_args, 4, &bad_plan) == 0, "a plan is made unchecked");
    CHECK(cinn_like_call_plan_run(bad_plan, data, NULL) != 0 &&
              strstr(cinn_like_get_last_error(), "w has size 17") != NULL,
          "a [17] weight in the plan: %s", cinn_like_get_last_error());
    cinn_like_call_plan_free(bad_plan);
    CHECK(cinn_like_call_plan_create(f, NULL, 4, &bad_plan) != 0 && bad_plan == NULL,
          "null examples must be refused");
    CHECK(cinn_like_call_plan_run(NULL, data, NULL) != 0, "a null plan must be refused");
    /* CUDA graphs capture functions of the cuda target only. */
    cinn_like_cuda_graph graph = NULL;
    CHECK(cinn_like_call_plan_capture(plan, data, NULL, &graph) != 0 && graph == NULL &&
              strstr(cinn_like_get_last_error(), "argument 0 is not a CUDA tensor") != NULL,
          "capturing a CPU function: %s", cinn_like_get_last_error());
    CHECK(cinn_like_call_plan_capture(plan, NULL, NULL, &graph) != 0 &&
              strstr(cinn_like_get_last_error(), "the data pointers are null") != NULL,
          "null data must be refused: %s", cinn_like_get_last_error());
    CHECK(cinn_like_cuda_graph_launch(NULL, NULL) != 0 &&
              strstr(cinn_like_get_last_error(), "the graph is null") != NULL,
          "a null graph must be refused: %s", cinn_like_get_last_error());
    cinn_like_cuda_graph_free(NULL);
    cinn_like_call_plan_free(plan);
    free(x2);
    free(y2);
  }

  cinn_like_function none = NULL;
  CHECK(cinn_like_module_lookup(m, "", &none) != 0 &&
            strstr(cinn_like_get_last_error(), "name to look up is empty") != NULL &&
            strstr(cinn_like_get_last_error(), "bias_relu") != NULL,
        "empty lookup name: %s", cinn_like_get_last_error());

  cinn_like_module bad = NULL;
  CHECK(cinn_like_compile(kProgram, "x86", "", &bad) != 0 && bad == NULL &&
            strstr(cinn_like_get_last_error(), "function name is empty") != NULL,
        "empty function name: %s", cinn_like_get_last_error());
  CHECK(cinn_like_compile("{\"format\": 5}", "x86", "f", &bad) != 0 &&
            strstr(cinn_like_get_last_error(), "not a cinn_like program") != NULL &&
            strstr(cinn_like_get_last_error(), "type_error") == NULL,
        "a number as the format: %s", cinn_like_get_last_error());
  CHECK(cinn_like_compile("{not json", "x86", "f", &bad) != 0 && bad == NULL, "bad JSON must fail");
  CHECK(strstr(cinn_like_get_last_error(), "not valid JSON") != NULL, "message: %s", cinn_like_get_last_error());
  CHECK(cinn_like_compile(kProgram, "tpu", "f", &bad) != 0, "unknown target must fail");
  CHECK(cinn_like_set_flag("cinn_like_no_such_flag", "1") != 0, "unknown flag must fail");
  CHECK(cinn_like_set_flag("cinn_like_fast_math", "false") == 0, "set a flag: %s", cinn_like_get_last_error());
  /* gflags' and glog's own flags are not cinn_like's: flagfile once exited the process. */
  const char* foreign[][2] = {{"flagfile", "/nonexistent"}, {"fromenv", "cinn_like_fusion"},
                              {"tryfromenv", "cinn_like_fusion"}, {"v", "3"},
                              {"logtostderr", "true"}, {"", "1"}};
  for (size_t k = 0; k < sizeof(foreign) / sizeof(foreign[0]); ++k) {
    CHECK(cinn_like_set_flag(foreign[k][0], foreign[k][1]) != 0 &&
              strstr(cinn_like_get_last_error(), "only cinn_like's flags can be set") != NULL,
          "flag '%s' must be refused: %s", foreign[k][0], cinn_like_get_last_error());
  }
  CHECK(cinn_like_set_flag("cinn_like_fusion", "maybe") != 0 &&
            strstr(cinn_like_get_last_error(), "of type bool") != NULL,
        "a bool flag refuses 'maybe': %s", cinn_like_get_last_error());

  /* The same Program for the OpenCL target on the same host tensors, where this build and this
     machine have OpenCL (CI: PoCL); else the error names OpenCL. */
  cinn_like_module ocl = NULL;
  if (cinn_like_compile(kProgram, "opencl", "bias_relu", &ocl) == 0) {
    cinn_like_function g = NULL;
    CHECK(cinn_like_module_lookup(ocl, "bias_relu", &g) == 0, "opencl lookup: %s",
          cinn_like_get_last_error());
    for (int64_t i = 0; i < n * 16; ++i) y[i] = NAN;
    CHECK(g && cinn_like_call(g, args, 4, NULL) == 0, "opencl call: %s", cinn_like_get_last_error());
    int wrong_ocl = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int j = 0; j < 16; ++j) {
        float expect = x[i * 16 + j] * w[j] + b[j];
        expect = expect > 0 ? expect : 0;
        if (!(fabsf(y[i * 16 + j] - expect) <= 1e-6f * (1 + fabsf(expect)))) ++wrong_ocl;
      }
    }
    CHECK(wrong_ocl == 0, "opencl: %d outputs differ from relu(x * w + b)", wrong_ocl);
    cinn_like_module_free(ocl);
  } else {
    CHECK(strstr(cinn_like_get_last_error(), "OpenCL") != NULL,
          "an OpenCL compile that fails names OpenCL: %s", cinn_like_get_last_error());
  }

  cinn_like_module_free(m);
  free(x);
  free(y);
  if (failures == 0) printf("c_api_host: all checks passed (n=%lld)\n", (long long)n);
  return failures == 0 ? 0 : 1;
}
