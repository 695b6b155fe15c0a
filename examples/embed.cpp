// Embedding coprove in a host service: the circuit's Groth16 keys made once (a single-party setup,
// toxic waste from the OS CSPRNG, wiped), an engine on the service's own io_context, a job proved
// with co_await (use_awaitable), every proof checked with the verifying key, and a clean shutdown.
// Built and run by the tests, so that this example keeps compiling and working.
//
//   usage: example_embed [LOG_CONSTRAINTS]   (default 12: 4096 constraints a partition)
#include <coprove/engine/compute_backend.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/circuits.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>

namespace asio = boost::asio;
using namespace coprove;

// One job of 4 partitions: submit, await, verify. Runs on the io_context's thread.
asio::awaitable<bool> prove_one(engine::engine& engine, const groth16::verifying_key& vk, unsigned log_constraints) {
  engine::prove_request request;
  request.circuit = "mimc";
  request.log_constraints = log_constraints;
  request.partitions = 4;
  request.seed = 7;

  // The completion is (std::error_code, prove_result); as_tuple hands both to the coroutine
  // instead of throwing.
  auto [ec, result] = co_await engine.async_prove(request, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    std::cerr << "job failed: " << ec.message() << "\n";
    co_return false;
  }
  // The engine checked every proof before returning it; a verifier holding only the verifying
  // key checks them again here.
  const auto pvk = groth16::prepared_verifying_key::from(vk);
  bool all_verified = true;
  for (const auto& partition : result.partitions) {
    const bool ok = partition.proof && groth16::verify(pvk, *partition.proof, partition.public_inputs).accepted;
    all_verified = all_verified && ok;
    std::cout << "partition " << partition.index << ": proof " << (ok ? "verified" : "FAILED") << " on device "
              << partition.device << ", " << partition.timings.total_ns / 1000 << " us\n";
  }
  std::cout << "job " << result.job_id << ": " << result.partitions.size() << " proofs in "
            << result.total_ns / 1000000 << " ms\n";

  // Stop admitting work and wait for everything to be released before the engine goes away.
  co_await engine.async_shutdown(/*drain=*/true, asio::use_awaitable);
  co_return all_verified;
}

int main(int argc, char** argv) {
  const unsigned log_constraints = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 12;

  // The keys of the circuit at this size; a service loads them from the files `coprove setup`
  // writes (groth16::read_params) instead.
  auto secrets = groth16::secret_source::system();
  const auto circuit = r1cs::make_circuit("mimc", log_constraints, 1, 0);
  auto key = std::make_shared<const groth16::proving_key>(
      groth16::setup(groth16::record_matrices(*circuit), secrets));

  asio::io_context io;  // the service's event loop: the engine's control executor
  engine::engine_config config;
  config.max_log_constraints = log_constraints;  // the memory plan is sized for this
  config.keys = {{"mimc", log_constraints, key, "made by example_embed"}};
  // The CPU backend here; a GPU service passes coprove::cuda::make_cuda_backend() instead.
  engine::engine engine(io.get_executor(), config, engine::make_host_backend(/*devices=*/1, /*slots=*/2));

  int exit_code = 1;
  asio::co_spawn(io, prove_one(engine, key->vk, log_constraints), [&](std::exception_ptr error, bool verified) {
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
      }
      return;
    }
    exit_code = verified ? 0 : 1;
  });
  io.run();
  return exit_code;
}
