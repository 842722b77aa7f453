#include "support/onnx_runtime.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/test_paths.h"

namespace pfc::test {

namespace {

// Runs a shell command; returns its exit status and what it printed (stdout and stderr).
int run_command(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  PFC_CHECK(pipe != nullptr, "cannot run '{}'", command);
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::string onnxruntime_python() {
  const std::string script = source_dir() + "/tests/support/python_venv.sh";
  std::string output;
  const int status = run_command("bash " + quoted(script) + " onnxruntime onnxruntime numpy", output);
  if (status == 77) return "";
  PFC_CHECK(status == 0, "python_venv.sh failed (exit {}): {}", status, output);
  // The script's last line is the python; pip's or venv's words may come before it.
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const auto newline = output.rfind('\n');
  return newline == std::string::npos ? output : output.substr(newline + 1);
}

Tensor onnxruntime_embed(const std::string& python, const std::string& model_path,
                         const Tensor& images, const std::string& scratch, std::int64_t batch) {
  namespace fs = std::filesystem;
  const std::string input = (fs::path(scratch) / "onnx_input.f32").string();
  const std::string result = (fs::path(scratch) / "onnx_output.f32").string();
  {
    std::ofstream out(input, std::ios::binary);
    out.write(static_cast<const char*>(images.raw()), static_cast<std::streamsize>(images.bytes()));
    PFC_CHECK(out.good(), "cannot write {}", input);
  }
  const std::string script = source_dir() + "/tests/support/onnx_embed.py";
  std::string output;
  const int status = run_command(quoted(python) + " " + quoted(script) + " " + quoted(model_path) +
                                     " " + quoted(input) + " " + quoted(result) + " " +
                                     std::to_string(batch),
                                 output);
  PFC_CHECK(status == 0, "onnxruntime failed on {} (exit {}): {}", model_path, status, output);
  std::fputs(output.c_str(), stdout);
  const auto bytes = static_cast<std::int64_t>(fs::file_size(result));
  const std::int64_t n = images.dim(0);
  PFC_CHECK(bytes % (n * 4) == 0, "{}: {} bytes for {} images", result, bytes, n);
  Tensor embeddings = Tensor::host({n, bytes / (n * 4)}, DType::f32);
  std::ifstream in(result, std::ios::binary);
  in.read(static_cast<char*>(embeddings.raw()), bytes);
  PFC_CHECK(in.good(), "cannot read {}", result);
  return embeddings;
}

}  // namespace pfc::test
